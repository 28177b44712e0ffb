#pragma once
// Reading PyTorch reference arrays (tests/support/ReferenceData.hpp) into the tensors and Views of
// the kernel tests against PyTorch, walking the case groups of ops.h5 and comparing with them.

#include <initializer_list>
#include <ios>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "support/ReferenceData.hpp"
#include "test_elementwise_support.hpp"

namespace halo3d::testing {

// The `params` JSON attribute of a case group.
inline nlohmann::json paramsOf(const H5File& file, const std::string& group) {
  return file.jsonAttribute(group, "params");
}

// Copies a (N, C, D, H, W) array into the owned cells of `t` (same shape) as T.
template <class T>
void loadOwned(const Array& a, const HostTensor<T>& t) {
  const auto o = t.owned();
  std::size_t k = 0;
  forEachIndex5(o, [&](std::size_t n, std::size_t c, std::size_t d, std::size_t h, std::size_t w) {
    o(n, c, d, h, w) = T(a.data[k++]);
  });
}

// A whole-volume host tensor holding a (N, C, D, H, W) array.
template <class T>
HostTensor<T> tensorOf(const std::string& label, const Array& a) {
  EXPECT_EQ(a.shape.size(), 5u) << label;
  HostTensor<T> t(
      label, TensorBlock::whole({a.extent(0), a.extent(1), a.extent(2), a.extent(3), a.extent(4)}));
  loadOwned(a, t);
  return t;
}

// A device matrix holding a rank-2 array.
template <class T>
kernels::Matrix<T, Exec> matrixOf(const std::string& label, const Array& a) {
  EXPECT_EQ(a.shape.size(), 2u) << label;
  kernels::Matrix<T, Exec> m(label, a.extent(0), a.extent(1));
  auto h = Kokkos::create_mirror_view(m);
  for (std::size_t k = 0; k < a.size(); ++k)
    h.data()[k] = T(a.data[k]);
  Kokkos::deep_copy(m, h);
  return m;
}

// f(file, group) for every case group <op>/<name> of ops.h5 (there must be some).
template <class F>
void forEachCase(const std::string& op, const F& f) {
  const H5File file(referencePath("ops.h5"));
  const std::vector<std::string> cases = file.children(op);
  ASSERT_FALSE(cases.empty()) << op;
  for (const std::string& name : cases)
    f(file, op + "/" + name);
}

// Our values of a tensor against the reference array <group>/<name>: max |ours - ref| / max |ref|.
inline void expectMatches(const std::vector<double>& ours, const H5File& file,
                          const std::string& group, const std::string& name, double tolerance) {
  EXPECT_LE(maxRelError(ours, file.read(group + "/" + name).data), tolerance)
      << group << " " << name;
}

// The same for each (name, our values) of `ours`.
inline void expectMatches(std::initializer_list<std::pair<const char*, std::vector<double>>> ours,
                          const H5File& file, const std::string& group, double tolerance) {
  for (const auto& [name, v] : ours)
    expectMatches(v, file, group, name, tolerance);
}

// The same for the global cells `box` of a tensor.
template <class T>
void expectMatches(const HostTensor<T>& ours, const H5File& file, const std::string& group,
                   const std::string& name, const Box& box, double tolerance) {
  EXPECT_LE(maxRelError(ours, tensorOf<double>(name + "_ref", file.read(group + "/" + name)), box),
            tolerance)
      << group << " " << name;
}

// max |ours - ref| / max |ref| over a contiguous View (parameters) or a whole-block tensor without
// ghosts, in any memory space.
template <class View>
double relativeError(const View& ours, const Array& ref) {
  const std::vector<double> v = values(ours);
  EXPECT_EQ(v.size(), ref.size());
  return maxRelError(v, ref.data);
}

// Each tensor's error, at most `tolerance`, and recorded as the property relative_error_<name>.
inline void expectErrorsBelow(const std::string& group,
                              std::initializer_list<std::pair<const char*, double>> errors,
                              double tolerance) {
  for (const auto& [name, error] : errors) {
    EXPECT_LE(error, tolerance) << group << " " << name;
    ::testing::Test::RecordProperty(std::string("relative_error_") + name,
                                    concat(std::scientific, error));
  }
}

// A device tensor holding a (N, C, D, H, W) array.
template <class T>
DeviceTensor<T> deviceTensorOf(const std::string& label, const Array& a) {
  return toDevice(tensorOf<T>(label, a));
}

// The tolerance of the tests over OpsCase: 1e-4 in fp32, 1e-12 in fp64.
template <class T>
constexpr double opsCaseTolerance() {
  return std::is_same<T, float>::value ? 1e-4 : 1e-12;
}

// One case group of ops.h5 on one kernel path: the parameter of the tests that run both paths.
struct OpsCase {
  std::string group;
  KernelPath path;
  friend void PrintTo(const OpsCase& c, std::ostream* os) {
    *os << c.group << (c.path == KernelPath::Fastest ? " fastest path" : " device path");
  }
};

inline std::vector<OpsCase> opsCases(const std::string& op) {
  H5File f(referencePath("ops.h5"));
  std::vector<OpsCase> all;
  for (const auto& name : f.children(op))
    for (auto path : {KernelPath::Fastest, KernelPath::Device})
      all.push_back({op + "/" + name, path});
  return all;
}

// The fixture of the tests over OpsCase: ops.h5, the case's group and its kernel path.
class OpsCaseTest : public ::testing::TestWithParam<OpsCase> {
 protected:
  const H5File f{referencePath("ops.h5")};
  const std::string g_name = GetParam().group;
  const KernelPath path = GetParam().path;
};

// case<name>_fastest or case<name>_device.
inline std::string opsCaseName(const ::testing::TestParamInfo<OpsCase>& info) {
  const std::string name = info.param.group.substr(info.param.group.rfind('/') + 1);
  return "case" + name + (info.param.path == KernelPath::Fastest ? "_fastest" : "_device");
}

}  // namespace halo3d::testing

// The fp32 and fp64 tests Suite.Float32 and Suite.Float64 of a comparison check<T>(tolerance).
#define HALO3D_PYTORCH_FLOAT_TESTS(Suite, check, float_tolerance, double_tolerance) \
  HALO3D_FLOAT_DOUBLE_TESTS(Suite, Float32, Float64, check, (float_tolerance), (double_tolerance))

// The tests of Suite, a ::testing::TestWithParam<OpsCase> fixture with a member check<T>(), over
// every case of op/ in ops.h5 on both kernel paths (Suite.MatchesFloat and MatchesDouble), and
// Suite.EveryCaseIsCovered: op/ holds `cases` groups.
#define HALO3D_OPS_CASE_TESTS(Suite, op, cases)                                              \
  TEST_P(Suite, MatchesFloat) {                                                              \
    check<float>();                                                                          \
  }                                                                                          \
  TEST_P(Suite, MatchesDouble) {                                                             \
    check<double>();                                                                         \
  }                                                                                          \
  INSTANTIATE_TEST_SUITE_P(Ops, Suite, ::testing::ValuesIn(::halo3d::testing::opsCases(op)), \
                           ::halo3d::testing::opsCaseName);                                  \
  TEST(Suite, EveryCaseIsCovered) {                                                          \
    const ::halo3d::testing::H5File f(::halo3d::testing::referencePath("ops.h5"));           \
    EXPECT_EQ(f.children(op).size(), std::size_t(cases));                                    \
  }
