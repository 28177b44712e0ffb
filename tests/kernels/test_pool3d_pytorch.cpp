// 3D pooling against PyTorch (ops.h5, groups pool3d/<i>: max and average, k2/s2, k3/s2/p1,
// k3/s1/p1): forward and input gradient, on both kernel paths, in fp32 and fp64. The error of a
// tensor is max|ours - ref| / max|ref|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "halo3d/kernels/Pool3d.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

class Pool3dPytorch : public OpsCaseTest {
 protected:
  template <class T>
  void check() {
    const auto params = f.jsonAttribute(g_name, "params");
    ASSERT_TRUE(params.at("count_include_pad").get<bool>()) << g_name;
    const bool is_max = params.at("kind").get<std::string>() == "max";
    const WindowGeometry g =
        WindowGeometry::cubic(params.at("kernel").get<int>(), params.at("stride").get<int>(),
                              params.at("padding").get<int>());
    const Array ya = f.read(g_name + "/y");
    const Exec exec;
    const auto x = deviceTensorOf<T>("x", f.read(g_name + "/x"));
    const auto dy = deviceTensorOf<T>("dy", f.read(g_name + "/dy"));
    DeviceTensor<T> y("y", dy.block()), dx("dx", x.block());
    DeviceTensor<index_t> argmax("argmax", dy.block());
    if (is_max) {
      kernels::maxPool3dForward(exec, x, g, y, argmax, y.block().owned(), path);
      kernels::maxPool3dBackward(exec, dy, argmax, g, dx, dx.block().owned(), dy.block().owned(),
                                 path);
    } else {
      kernels::avgPool3dForward(exec, x, g, y, y.block().owned(), path);
      kernels::avgPool3dBackward(exec, dy, g, dx, dx.block().owned(), dy.block().owned(), path);
    }
    exec.fence();
    expectErrorsBelow(g_name,
                      {{"y", relativeError(y.view(), ya)},
                       {"dx", relativeError(dx.view(), f.read(g_name + "/dx"))}},
                      opsCaseTolerance<T>());
  }
};

HALO3D_OPS_CASE_TESTS(Pool3dPytorch, "pool3d", 6)

}  // namespace
}  // namespace halo3d::testing
