// Dense layers against PyTorch's Linear (ops.h5, linear/*): y, dx, dw, db in fp32 and fp64. Error
// measure per tensor: max |ours - ref| / max |ref|, at most 1e-4 in fp32 and 1e-10 in fp64.
#include <gtest/gtest.h>

#include "halo3d/kernels/Dense.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

template <class T>
void checkCases(double tolerance) {
  forEachCase("linear", [&](const H5File& file, const std::string& g) {
    const Array xa = file.read(g + "/x"), wa = file.read(g + "/w");
    const auto x = matrixOf<T>("x", xa), w = matrixOf<T>("w", wa),
               dy = matrixOf<T>("dy", file.read(g + "/dy"));
    const auto b = makeVector<T>("b", file.read(g + "/b").data);
    kernels::Matrix<T, Exec> y("y", xa.extent(0), wa.extent(0)),
        dx("dx", xa.extent(0), xa.extent(1));
    kernels::Matrix<T, Exec> dw("dw", wa.extent(0), wa.extent(1));
    DeviceVector<T> db("db", wa.extent(0));
    kernels::denseForward(Exec(), x, w, b, y);
    kernels::denseBackwardData(Exec(), dy, w, dx);
    kernels::denseBackwardWeights(Exec(), x, dy, dw);
    kernels::denseBackwardBias(Exec(), dy, db);
    expectMatches({{"y", values(y)}, {"dx", values(dx)}, {"dw", values(dw)}, {"db", values(db)}},
                  file, g, tolerance);
  });
}

HALO3D_PYTORCH_FLOAT_TESTS(DensePytorch, checkCases, 1e-4, 1e-10)

}  // namespace
}  // namespace halo3d::testing
