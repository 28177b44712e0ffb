// Transposed conv3d against PyTorch (ops.h5, groups conv_transpose3d/<i>): forward, input, weight
// and bias gradients, on both kernel paths, in fp32 and fp64. The error of a tensor is max|ours -
// ref| / max|ref|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "halo3d/kernels/ConvTranspose3d.hpp"
#include "test_elementwise_pytorch_support.hpp"

namespace halo3d::testing {
namespace {

using Memory = Exec::memory_space;

template <class T>
Kokkos::View<T*****, Kokkos::LayoutRight, Memory> weightsOf(const std::string& label,
                                                            const Array& a) {
  Kokkos::View<T*****, Kokkos::LayoutRight, Memory> v(label, a.extent(0), a.extent(1), a.extent(2),
                                                      a.extent(3), a.extent(4));
  auto host = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < a.size(); ++i)
    host.data()[i] = T(a.data[i]);
  Kokkos::deep_copy(v, host);
  return v;
}

kernels::ConvTranspose3dGeometry geometryOf(const H5File& f, const std::string& group,
                                            const Array& w) {
  const auto params = paramsOf(f, group);
  kernels::ConvTranspose3dGeometry g;
  for (int d = 0; d < 3; ++d) {
    g.window.kernel[d] = int(w.extent(2 + d));
    g.window.stride[d] = params.at("stride").at(d).get<int>();
    g.window.padding[d] = params.at("padding").at(d).get<int>();
    g.output_padding[d] = params.at("output_padding").at(d).get<int>();
    g.window.dilation[d] = params.contains("dilation") ? params.at("dilation").at(d).get<int>() : 1;
  }
  return g;
}

class ConvTranspose3dPytorch : public OpsCaseTest {
 protected:
  template <class T>
  void check() {
    const Array xa = f.read(g_name + "/x"), wa = f.read(g_name + "/w"), ya = f.read(g_name + "/y");
    const Array dya = f.read(g_name + "/dy");
    const kernels::ConvTranspose3dGeometry g = geometryOf(f, g_name, wa);
    const Exec exec;
    const auto x = deviceTensorOf<T>("x", xa);
    const auto dy = deviceTensorOf<T>("dy", dya);
    const auto w = weightsOf<T>("w", wa);
    const auto b = makeVector<T>("b", f.read(g_name + "/b").data);
    ASSERT_EQ(g.outputExtents(x.block().globalExtents()), dy.block().globalExtents()) << g_name;

    DeviceTensor<T> y("y", dy.block());
    kernels::convTranspose3dForward(exec, x, w, b, g, y, y.block().owned(), path);
    DeviceTensor<T> dx("dx", x.block());
    kernels::convTranspose3dBackwardData(exec, dy, w, g, dx, dx.block().owned(), dy.block().owned(),
                                         path);
    Kokkos::View<T*****, Kokkos::LayoutRight, Memory> dw("dw", wa.extent(0), wa.extent(1),
                                                         wa.extent(2), wa.extent(3), wa.extent(4));
    Kokkos::View<T*, Kokkos::LayoutRight, Memory> db("db", b.extent(0));
    kernels::convTranspose3dBackwardFilter(exec, x, dy, g, dw, db, dy.block().owned(), false, path);
    exec.fence();

    expectErrorsBelow(g_name,
                      {{"y", relativeError(y.view(), ya)},
                       {"dx", relativeError(dx.view(), f.read(g_name + "/dx"))},
                       {"dw", relativeError(dw, f.read(g_name + "/dw"))},
                       {"db", relativeError(db, f.read(g_name + "/db"))}},
                      opsCaseTolerance<T>());
  }
};

HALO3D_OPS_CASE_TESTS(ConvTranspose3dPytorch, "conv_transpose3d", 3)

}  // namespace
}  // namespace halo3d::testing
