// 3D pooling against PyTorch (ops.h5, groups pool3d/<i>: max and average, k2/s2, k3/s2/p1,
// k3/s1/p1): forward and input gradient, on both kernel paths, in fp32 and fp64. The error of a
// tensor is max|ours - ref| / max|ref|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "halo3d/kernels/Pool3d.hpp"
#include "support/ReferenceData.hpp"

namespace halo3d::kernels {
namespace {

using Memory = Kokkos::DefaultExecutionSpace::memory_space;
using testing::Array;
using testing::H5File;

template <class T>
constexpr double tolerance() {
  return std::is_same<T, float>::value ? 1e-4 : 1e-12;
}

Shape5 shape5(const Array& a) {
  return {a.extent(0), a.extent(1), a.extent(2), a.extent(3), a.extent(4)};
}

template <class T>
HaloTensor<T, Memory> tensorOf(const std::string& label, const Array& a) {
  HaloTensor<T, Memory> t(label, TensorBlock::whole(shape5(a)));
  auto host = Kokkos::create_mirror_view(t.view());
  std::size_t i = 0;
  for (index_t n = 0; n < a.extent(0); ++n)
    for (index_t c = 0; c < a.extent(1); ++c)
      for (index_t d = 0; d < a.extent(2); ++d)
        for (index_t h = 0; h < a.extent(3); ++h)
          for (index_t w = 0; w < a.extent(4); ++w)
            host(n, c, d, h, w) = T(a.data[i++]);
  Kokkos::deep_copy(t.view(), host);
  return t;
}

// max|ours - ref| / max|ref| over a contiguous view (weights, bias) or a whole-block tensor without
// ghosts.
template <class View>
double relativeError(const View& ours, const Array& ref) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ours);
  EXPECT_EQ(host.size(), ref.size());
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    diff = std::max(diff, std::abs(double(host.data()[i]) - ref.data[i]));
    scale = std::max(scale, std::abs(ref.data[i]));
  }
  return diff / scale;
}

struct Case {
  std::string group;
  KernelPath path;
  friend void PrintTo(const Case& c, std::ostream* os) {
    *os << c.group << (c.path == KernelPath::Fastest ? " fastest path" : " device path");
  }
};

std::vector<Case> cases() {
  H5File f(testing::referencePath("ops.h5"));
  std::vector<Case> all;
  for (const auto& name : f.children("pool3d"))
    for (auto path : {KernelPath::Fastest, KernelPath::Device})
      all.push_back({"pool3d/" + name, path});
  return all;
}

class Pool3dPytorch : public ::testing::TestWithParam<Case> {
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
    const auto x = tensorOf<T>("x", f.read(g_name + "/x"));
    const auto dy = tensorOf<T>("dy", f.read(g_name + "/dy"));
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
    const std::pair<const char*, double> errors[] = {
        {"y", relativeError(y.view(), ya)},
        {"dx", relativeError(dx.view(), f.read(g_name + "/dx"))}};
    for (const auto& [name, error] : errors) {
      EXPECT_LE(error, tolerance<T>()) << g_name << " " << name;
      RecordProperty(std::string("relative_error_") + name, concat(std::scientific, error));
    }
  }
};

TEST_P(Pool3dPytorch, MatchesFloat) {
  check<float>();
}
TEST_P(Pool3dPytorch, MatchesDouble) {
  check<double>();
}

INSTANTIATE_TEST_SUITE_P(Ops, Pool3dPytorch, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name =
                               info.param.group.substr(info.param.group.rfind('/') + 1);
                           return "case" + name +
                                  (info.param.path == KernelPath::Fastest ? "_fastest" : "_device");
                         });

TEST(Pool3dPytorch, EveryCaseIsCovered) {
  const H5File f(testing::referencePath("ops.h5"));
  EXPECT_EQ(f.children("pool3d").size(), 6u);
}

}  // namespace
}  // namespace halo3d::kernels
