// LeakyReLU against PyTorch (ops.h5, leaky_relu/*) in fp32 and fp64. Error measure per tensor:
// max |ours - ref| / max |ref|, at most 1e-4 in fp32 and 1e-12 in fp64.
#include <gtest/gtest.h>

#include "halo3d/kernels/Activations.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

template <class T>
void checkCases(double tolerance) {
  const H5File file(referencePath("ops.h5"));
  const std::vector<std::string> cases = file.children("leaky_relu");
  ASSERT_FALSE(cases.empty());
  for (const std::string& name : cases) {
    const std::string g = "leaky_relu/" + name;
    const double slope = paramsOf(file, g).at("negative_slope").get<double>();
    const auto x = tensorOf<T>("x", file.read(g + "/x"));
    const auto dy = tensorOf<T>("dy", file.read(g + "/dy"));
    const auto y_ref = tensorOf<double>("y_ref", file.read(g + "/y"));
    const auto dx_ref = tensorOf<double>("dx_ref", file.read(g + "/dx"));
    const TensorBlock& block = x.block();
    DeviceTensor<T> y("y", block), dx("dx", block);
    kernels::leakyReluForward(Exec(), toDevice(x), slope, y, block.owned());
    kernels::leakyReluBackward(Exec(), toDevice(x), toDevice(dy), slope, dx, block.owned());
    EXPECT_LE(maxRelError(toHost(y), y_ref, block.owned()), tolerance) << g << " y";
    EXPECT_LE(maxRelError(toHost(dx), dx_ref, block.owned()), tolerance) << g << " dx";
  }
}

TEST(LeakyReluPytorch, Float32) {
  checkCases<float>(1e-4);
}
TEST(LeakyReluPytorch, Float64) {
  checkCases<double>(1e-12);
}

}  // namespace
}  // namespace halo3d::testing
