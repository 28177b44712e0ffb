// Dense layers against PyTorch's Linear (ops.h5, linear/*): y, dx, dw, db in fp32 and fp64. Error
// measure per tensor: max |ours - ref| / max |ref|, at most 1e-4 in fp32 and 1e-10 in fp64.
#include <gtest/gtest.h>

#include "halo3d/kernels/Dense.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

template <class T>
void checkCases(double tolerance) {
  const H5File file(referencePath("ops.h5"));
  const std::vector<std::string> cases = file.children("linear");
  ASSERT_FALSE(cases.empty());
  for (const std::string& name : cases) {
    const std::string g = "linear/" + name;
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
    EXPECT_LE(maxRelError(values(y), file.read(g + "/y").data), tolerance) << g;
    EXPECT_LE(maxRelError(values(dx), file.read(g + "/dx").data), tolerance) << g;
    EXPECT_LE(maxRelError(values(dw), file.read(g + "/dw").data), tolerance) << g;
    EXPECT_LE(maxRelError(values(db), file.read(g + "/db").data), tolerance) << g;
  }
}

TEST(DensePytorch, Float32) {
  checkCases<float>(1e-4);
}
TEST(DensePytorch, Float64) {
  checkCases<double>(1e-10);
}

}  // namespace
}  // namespace halo3d::testing
