// Batch norm in training mode against PyTorch (ops.h5, batchnorm3d/*): y, dx, dgamma, dbeta and the
// running statistics after one step from PyTorch's initial 0 and 1, in fp32 and fp64. Error measure
// per tensor: max |ours - ref| / max |ref|, at most 1e-4 in fp32 and 1e-10 in fp64.
#include <gtest/gtest.h>

#include "halo3d/kernels/BatchNorm.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

template <class T>
void checkCases(double tolerance) {
  forEachCase("batchnorm3d", [&](const H5File& file, const std::string& g) {
    const nlohmann::json params = paramsOf(file, g);
    const double eps = params.at("eps").get<double>(),
                 momentum = params.at("momentum").get<double>();
    const auto x_h = tensorOf<T>("x", file.read(g + "/x"));
    const auto dy_h = tensorOf<T>("dy", file.read(g + "/dy"));
    const TensorBlock& block = x_h.block();
    const Box box = block.owned();
    const index_t c = block.channels();
    const double count = double(block.localSamples() * box.size());
    const auto x = toDevice(x_h), dy = toDevice(dy_h);
    const auto gamma = makeVector<T>("gamma", file.read(g + "/gamma").data);
    const auto beta = makeVector<T>("beta", file.read(g + "/beta").data);

    DeviceVector<double> stats("stats", kernels::batchNormStatsSize(c));
    DeviceVector<T> mean("mean", c), var("var", c);
    kernels::batchNormStatistics(Exec(), x, stats, box);
    kernels::batchNormMoments(Exec(), stats, mean, var);
    DeviceTensor<T> y("y", block);
    kernels::batchNormForward(Exec(), x, mean, var, gamma, beta, eps, y, box);
    auto running_mean = makeVector<T>("running_mean", std::vector<double>(std::size_t(c), 0.0));
    auto running_var = makeVector<T>("running_var", std::vector<double>(std::size_t(c), 1.0));
    kernels::batchNormUpdateRunningStats(Exec(), mean, var, count, momentum, running_mean,
                                         running_var);

    DeviceVector<double> sums("sums", kernels::batchNormBackwardSumsSize(c));
    kernels::batchNormBackwardSums(Exec(), x, dy, mean, var, eps, sums, box);
    DeviceTensor<T> dx("dx", block);
    kernels::batchNormBackward(Exec(), x, dy, mean, var, gamma, eps, sums, count, dx, box);
    DeviceVector<T> dgamma("dgamma", c), dbeta("dbeta", c);
    kernels::batchNormParameterGradients(Exec(), sums, dgamma, dbeta);

    // The tensors have no ghosts: their allocations are their owned cells.
    expectMatches({{"y", values(y.view())},
                   {"dx", values(dx.view())},
                   {"dgamma", values(dgamma)},
                   {"dbeta", values(dbeta)},
                   {"running_mean", values(running_mean)},
                   {"running_var", values(running_var)}},
                  file, g, tolerance);
  });
}

HALO3D_PYTORCH_FLOAT_TESTS(BatchNormPytorch, checkCases, 1e-4, 1e-10)

}  // namespace
}  // namespace halo3d::testing
