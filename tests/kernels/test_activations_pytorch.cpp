// LeakyReLU against PyTorch (ops.h5, leaky_relu/*) in fp32 and fp64. Error measure per tensor:
// max |ours - ref| / max |ref|, at most 1e-4 in fp32 and 1e-12 in fp64.
#include <gtest/gtest.h>

#include "halo3d/kernels/Activations.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

template <class T>
void checkCases(double tolerance) {
  forEachCase("leaky_relu", [&](const H5File& file, const std::string& g) {
    const double slope = paramsOf(file, g).at("negative_slope").get<double>();
    const auto x = tensorOf<T>("x", file.read(g + "/x"));
    const auto dy = tensorOf<T>("dy", file.read(g + "/dy"));
    const TensorBlock& block = x.block();
    DeviceTensor<T> y("y", block), dx("dx", block);
    kernels::leakyReluForward(Exec(), toDevice(x), slope, y, block.owned());
    kernels::leakyReluBackward(Exec(), toDevice(x), toDevice(dy), slope, dx, block.owned());
    expectMatches(toHost(y), file, g, "y", block.owned(), tolerance);
    expectMatches(toHost(dx), file, g, "dx", block.owned(), tolerance);
  });
}

HALO3D_PYTORCH_FLOAT_TESTS(LeakyReluPytorch, checkCases, 1e-4, 1e-12)

}  // namespace
}  // namespace halo3d::testing
