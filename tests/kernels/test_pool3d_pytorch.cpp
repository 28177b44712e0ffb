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

namespace halo3d::kernels {
namespace {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;
using testing::Array;
using testing::H5File;
using testing::OpsCase;
using testing::relativeError;
using testing::toDevice;

template <class T>
HaloTensor<T, Memory> deviceTensorOf(const std::string& label, const Array& a) {
  return toDevice(testing::tensorOf<T>(label, a));
}

template <class T>
constexpr double tolerance() {
  return std::is_same<T, float>::value ? 1e-4 : 1e-12;
}

class Pool3dPytorch : public ::testing::TestWithParam<OpsCase> {
 protected:
  template <class T>
  void check() {
    const H5File f(testing::referencePath("ops.h5"));
    const std::string& g_name = GetParam().group;
    const auto path = GetParam().path;
    const auto params = f.jsonAttribute(g_name, "params");
    ASSERT_TRUE(params.at("count_include_pad").get<bool>()) << g_name;
    const bool is_max = params.at("kind").get<std::string>() == "max";
    const WindowGeometry g =
        WindowGeometry::cubic(params.at("kernel").get<int>(), params.at("stride").get<int>(),
                              params.at("padding").get<int>());
    const Array ya = f.read(g_name + "/y");
    const Kokkos::DefaultExecutionSpace exec;
    const auto x = deviceTensorOf<T>("x", f.read(g_name + "/x"));
    const auto dy = deviceTensorOf<T>("dy", f.read(g_name + "/dy"));
    HaloTensor<T, Memory> y("y", dy.block()), dx("dx", x.block());
    HaloTensor<index_t, Memory> argmax("argmax", dy.block());
    if (is_max) {
      maxPool3dForward(exec, x, g, y, argmax, y.block().owned(), path);
      maxPool3dBackward(exec, dy, argmax, g, dx, dx.block().owned(), dy.block().owned(), path);
    } else {
      avgPool3dForward(exec, x, g, y, y.block().owned(), path);
      avgPool3dBackward(exec, dy, g, dx, dx.block().owned(), dy.block().owned(), path);
    }
    exec.fence();
    testing::expectErrorsBelow(g_name,
                               {{"y", relativeError(y.view(), ya)},
                                {"dx", relativeError(dx.view(), f.read(g_name + "/dx"))}},
                               tolerance<T>());
  }
};

TEST_P(Pool3dPytorch, MatchesFloat) {
  check<float>();
}
TEST_P(Pool3dPytorch, MatchesDouble) {
  check<double>();
}

INSTANTIATE_TEST_SUITE_P(Ops, Pool3dPytorch, ::testing::ValuesIn(testing::opsCases("pool3d")),
                         testing::opsCaseName);

TEST(Pool3dPytorch, EveryCaseIsCovered) {
  const H5File f(testing::referencePath("ops.h5"));
  EXPECT_EQ(f.children("pool3d").size(), 6u);
}

}  // namespace
}  // namespace halo3d::kernels
