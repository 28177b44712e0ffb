// conv3d against PyTorch (tests/reference/ops.h5, groups conv3d/0..7, computed in float64): every
// case, forward, backward-data, backward-filter and the bias gradient, run in fp32 through the
// public kernels. Error measure, per tensor: max |ours - ref| / max |ref|, which must be <= 1e-4.
#include <gtest/gtest.h>

#include <string>

#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/impl/Conv3dImpl.hpp"
#include "test_conv3d_support.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

constexpr double kTolerance = 1e-4;
constexpr int kCases = 8;

const H5File& opsFile() {
  static const H5File file(referencePath("ops.h5"));
  return file;
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
  loadOwned(a, t);
}

// max |ours - ref| / max |ref| over the owned cells of `t`.
template <class T>
double relError(const HostTensor<T>& t, const Array& ref) {
  return maxRelError(ownedValues(t), ref.data);
}

// The same for a parameter View (row-major like the reference).
template <class View>
double relError(const View& v, const Array& ref) {
  return relativeError(v, ref);
}

TEST(Conv3dPyTorch, FileHoldsTheExpectedCases) {
  EXPECT_EQ(opsFile().children("conv3d").size(), std::size_t(kCases));
}

class Conv3dPyTorch : public ::testing::TestWithParam<int> {};

// On the host code and on the device code (the team kernels a CUDA build runs).
TEST_P(Conv3dPyTorch, ForwardAndGradientsMatchInFloat) {
  const H5File& f = opsFile();
  const std::string group = "conv3d/" + std::to_string(GetParam());
  const nlohmann::json p = paramsOf(f, group);
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
