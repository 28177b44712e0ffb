// conv3d against PyTorch (tests/reference/ops.h5, groups conv3d/0..7, computed in float64): every
// case, forward, backward-data, backward-filter and the bias gradient, run in fp32 through the
// public kernels. Error measure, per tensor: max |ours - ref| / max |ref|, which must be <= 1e-4.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <string>

#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/impl/Conv3dImpl.hpp"
#include "support/ReferenceData.hpp"
#include "test_conv3d_support.hpp"

namespace halo3d::testing {
namespace {

constexpr double kTolerance = 1e-4;
constexpr int kCases = 8;

const H5File& opsFile() {
  static const H5File file(referencePath("ops.h5"));
  return file;
}

// The case's `params` JSON. H5File::attribute reads strings as ASCII, and HDF5 refuses to convert
// the file's UTF-8 strings to it (it returns an empty string), so this reads with the attribute's
// own character set.
nlohmann::json params(const std::string& group) {
  const hid_t file = H5Fopen(opsFile().path().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t attr = H5Aopen_by_name(file, group.c_str(), "params", H5P_DEFAULT, H5P_DEFAULT);
  const hid_t type = H5Aget_type(attr);
  const hid_t mem = H5Tcopy(H5T_C_S1);
  H5Tset_size(mem, H5T_VARIABLE);
  H5Tset_cset(mem, H5Tget_cset(type));
  char* text = nullptr;
  const bool ok = file >= 0 && attr >= 0 && H5Aread(attr, mem, &text) >= 0 && text;
  const std::string value = ok ? text : "";
  if (text) H5free_memory(text);
  H5Tclose(mem);
  H5Tclose(type);
  H5Aclose(attr);
  H5Fclose(file);
  require(ok, opsFile().path(), ": cannot read attribute 'params' of '", group, "'");
  return nlohmann::json::parse(value);
}

std::array<int, 3> triple(const nlohmann::json& j) {
  return {j.at(0).get<int>(), j.at(1).get<int>(), j.at(2).get<int>()};
}

// Copies a reference array into the owned cells of `t` (same shape) as T.
template <class T>
void load(const Array& a, const HostTensor<T>& t) {
  const auto o = t.owned();
  ASSERT_EQ(a.shape,
            (std::vector<index_t>{index_t(o.extent(0)), index_t(o.extent(1)), index_t(o.extent(2)),
                                  index_t(o.extent(3)), index_t(o.extent(4))}));
  std::size_t k = 0;
  for (std::size_t n = 0; n < o.extent(0); ++n)
    for (std::size_t c = 0; c < o.extent(1); ++c)
      for (std::size_t d = 0; d < o.extent(2); ++d)
        for (std::size_t h = 0; h < o.extent(3); ++h)
          for (std::size_t w = 0; w < o.extent(4); ++w)
            o(n, c, d, h, w) = T(a.data[k++]);
}

// max |ours - ref| / max |ref| over the owned cells of `t`.
template <class T>
double relError(const HostTensor<T>& t, const Array& ref) {
  const auto o = t.owned();
  double diff = 0, scale = 0;
  std::size_t k = 0;
  for (std::size_t n = 0; n < o.extent(0); ++n)
    for (std::size_t c = 0; c < o.extent(1); ++c)
      for (std::size_t d = 0; d < o.extent(2); ++d)
        for (std::size_t h = 0; h < o.extent(3); ++h)
          for (std::size_t w = 0; w < o.extent(4); ++w, ++k) {
            diff = std::max(diff, std::fabs(double(o(n, c, d, h, w)) - ref.data[k]));
            scale = std::max(scale, std::fabs(ref.data[k]));
          }
  return diff / scale;
}

// The same for a parameter View (row-major like the reference).
template <class View>
double relError(const View& v, const Array& ref) {
  EXPECT_EQ(v.span(), ref.size());
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    diff = std::max(diff, std::fabs(double(v.data()[k]) - ref.data[k]));
    scale = std::max(scale, std::fabs(ref.data[k]));
  }
  return diff / scale;
}

TEST(Conv3dPyTorch, FileHoldsTheExpectedCases) {
  EXPECT_EQ(opsFile().children("conv3d").size(), std::size_t(kCases));
}

class Conv3dPyTorch : public ::testing::TestWithParam<int> {};

// On the host code and on the device code (the team kernels a CUDA build runs).
TEST_P(Conv3dPyTorch, ForwardAndGradientsMatchInFloat) {
  const H5File& f = opsFile();
  const std::string group = "conv3d/" + std::to_string(GetParam());
  const nlohmann::json p = params(group);
  const Array x = f.read(group + "/x"), w = f.read(group + "/w"), b = f.read(group + "/b");
  const Array y = f.read(group + "/y"), dy = f.read(group + "/dy"), dx = f.read(group + "/dx");
  const Array dw = f.read(group + "/dw"), db = f.read(group + "/db");

  ConvCase c;
  c.samples = x.extent(0);
  c.in_ch = x.extent(1);
  c.out_ch = w.extent(0);
  c.volume = {x.extent(2), x.extent(3), x.extent(4)};
  c.g = geometry({int(w.extent(2)), int(w.extent(3)), int(w.extent(4))}, triple(p.at("stride")),
                 triple(p.at("dilation")), triple(p.at("padding")));
  SCOPED_TRACE(::testing::Message() << group << ": " << c);

  const HostTensor<float> xt("x", TensorBlock::whole(c.inShape(), c.inHalo()));
  const HostTensor<float> yt("y", TensorBlock::whole(c.outShape()));
  const HostTensor<float> dyt("dy", TensorBlock::whole(c.outShape()));
  const HostTensor<float> dxt("dx", TensorBlock::whole(c.inShape(), c.inHalo()));
  load(x, xt);
  load(dy, dyt);
  HostWeights<float> wt("w", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]);
  HostWeights<float> dwt("dw", c.out_ch, c.in_ch, c.g.kernel[0], c.g.kernel[1], c.g.kernel[2]);
  HostBias<float> bt("b", c.out_ch), dbt("db", c.out_ch);
  for (std::size_t k = 0; k < w.size(); ++k)
    wt.data()[k] = float(w.data[k]);
  for (std::size_t k = 0; k < b.size(); ++k)
    bt.data()[k] = float(b.data[k]);

  const HostExec exec;
  for (KernelPath path : {KernelPath::Fastest, KernelPath::Device}) {
    SCOPED_TRACE(kernelPathName(path));
    kernels::conv3dForward(exec, xt, wt, bt, c.g, yt, c.outBox(), path);
    kernels::conv3dBackwardData(exec, dyt, wt, c.g, dxt, c.inBox(), dyt.block().owned(), path);
    kernels::conv3dBackwardFilter(exec, xt, dyt, c.g, dwt, dbt, c.outBox(), false, path);
    exec.fence();

    EXPECT_LE(relError(yt, y), kTolerance);
    EXPECT_LE(relError(dxt, dx), kTolerance);
    EXPECT_LE(relError(dwt, dw), kTolerance);
    EXPECT_LE(relError(dbt, db), kTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCase, Conv3dPyTorch, ::testing::Range(0, kCases));

}  // namespace
}  // namespace halo3d::testing
