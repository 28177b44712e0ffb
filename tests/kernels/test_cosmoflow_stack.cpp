// One forward and backward pass of CosmoFlow's convolution stack (conv 3^3 without bias, the fourth
// with stride 2 -> LeakyReLU(0.01) -> average pool 3^3 stride 2 padding 1 where the model pools;
// the schedule of nn/models/CosmoFlow.cpp), chained from the kernels alone, without nn/ or MPI: so
// a kernels-only build (HALO3D_ENABLE_MPI=OFF) on a GPU runs the same layer chain as the model
// (scripts/device_check.sh). Every output, weight gradient and the input gradient equal those of
// the naive references (kernels/reference) on the host. The kernels run on the default execution
// space: in an OpenMP build through the host code and through the device code
// (KernelPath::Device), in a CUDA build on the GPU.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "KernelTestSupport.hpp"
#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/TensorBlock.hpp"
#include "halo3d/kernels/Activations.hpp"
#include "halo3d/kernels/Conv3d.hpp"
#include "halo3d/kernels/Pool3d.hpp"
#include "halo3d/kernels/reference/Activations.hpp"
#include "halo3d/kernels/reference/Conv3d.hpp"
#include "halo3d/kernels/reference/Pool3d.hpp"

namespace halo3d::kernels {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Host = Kokkos::DefaultHostExecutionSpace;

constexpr double kSlope = 0.01;

// One convolution of the stack and whether an average pool follows it.
struct ConvLayer {
  index_t in_ch, out_ch;
  WindowGeometry g;
  bool pool;
};

// CosmoFlow's seven convolutions for an input of `input`^3 and channel `width`
// (nn/models/CosmoFlow.cpp).
std::vector<ConvLayer> cosmoflowConvs(index_t in_ch, index_t input, double width) {
  constexpr int kChannels[7] = {16, 32, 64, 128, 256, 256, 256};
  std::vector<ConvLayer> layers;
  index_t e = input;
  for (int i = 0; i < 7; ++i) {
    const index_t out = std::max<index_t>(1, index_t(std::lround(kChannels[i] * width)));
    const WindowGeometry g = WindowGeometry::cubic(3, i == 3 ? 2 : 1, 1);
    e = g.outputExtents({e, e, e})[0];
    const bool scheduled = i < 5 || (i == 5 && input >= 256) || (i == 6 && input >= 512);
    const bool pool = scheduled && e > 2;
    if (pool) e = (e + 2 - 3) / 2 + 1;
    layers.push_back({in_ch, out, g, pool});
    in_ch = out;
  }
  return layers;
}

const WindowGeometry kPool = WindowGeometry::cubic(3, 2, 1);

// Deterministic values in [-1, 1).
double valueAt(std::uint64_t seed, std::uint64_t k) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + k;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) / double(1ull << 52) - 1.0;
}

// The tensors and weights of the stack in memory space M: per layer the input x (the previous
// layer's output), the convolution output z, its activation a and the pooled p, with their
// gradients, and the weights and their gradients. Every activation has one ghost cell per side
// (zero: the padding of the next window).
template <class T, class M>
struct Stack {
  using Tensor = HaloTensor<T, M>;
  using Weights = Kokkos::View<T*****, Kokkos::LayoutRight, M>;
  std::vector<ConvLayer> layers;
  std::vector<Tensor> x, z, a, p, dx, dz, da, dp;
  std::vector<Weights> w, dw;
  Kokkos::View<T*, Kokkos::LayoutRight, M> none{"no bias", 0};

  Stack(const std::vector<ConvLayer>& convs, index_t samples, index_t input) : layers(convs) {
    const HaloWidths halo = HaloWidths::uniform(1);
    auto block = [&](index_t c, index_t e) {
      return TensorBlock::whole({samples, c, e, e, e}, halo);
    };
    index_t e = input;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const ConvLayer& L = layers[l];
      const std::string s = std::to_string(l);
      if (l == 0) {
        x.emplace_back("x0", block(L.in_ch, e));
        dx.emplace_back("dx0", block(L.in_ch, e));
      } else {
        x.push_back(layers[l - 1].pool ? p[l - 1] : a[l - 1]);
        dx.push_back(layers[l - 1].pool ? dp[l - 1] : da[l - 1]);
      }
      e = L.g.outputExtents({e, e, e})[0];
      z.emplace_back("z" + s, block(L.out_ch, e));
      dz.emplace_back("dz" + s, block(L.out_ch, e));
      a.emplace_back("a" + s, block(L.out_ch, e));
      da.emplace_back("da" + s, block(L.out_ch, e));
      if (L.pool) {
        e = kPool.outputExtents({e, e, e})[0];
        p.emplace_back("p" + s, block(L.out_ch, e));
        dp.emplace_back("dp" + s, block(L.out_ch, e));
      } else {
        p.emplace_back();
        dp.emplace_back();
      }
      w.emplace_back("w" + s, L.out_ch, L.in_ch, 3, 3, 3);
      dw.emplace_back("dw" + s, L.out_ch, L.in_ch, 3, 3, 3);
    }
  }
  const Tensor& out() const { return layers.back().pool ? p.back() : a.back(); }
  const Tensor& dout() const { return layers.back().pool ? dp.back() : da.back(); }
};

Box volumeOf(const TensorBlock& b) {
  return Box::fromExtents(b.globalExtents());
}

// Forward and backward through the stack, with the kernels (Reference false, on `path`) or the
// naive references (Reference true, on the host).
template <bool Reference, class E, class T, class M>
void run(const E& exec, Stack<T, M>& s, KernelPath path) {
  for (std::size_t l = 0; l < s.layers.size(); ++l) {
    const ConvLayer& L = s.layers[l];
    const Box zbox = volumeOf(s.z[l].block());
    if constexpr (Reference) {
      reference::conv3dForward(exec, s.x[l], s.w[l], s.none, L.g, s.z[l], zbox);
      reference::leakyReluForward(exec, s.z[l], kSlope, s.a[l], zbox);
      if (L.pool)
        reference::avgPool3dForward(exec, s.a[l], kPool, s.p[l], volumeOf(s.p[l].block()));
    } else {
      conv3dForward(exec, s.x[l], s.w[l], s.none, L.g, s.z[l], zbox, path);
      leakyReluForward(exec, s.z[l], kSlope, s.a[l], zbox, path);
      if (L.pool) avgPool3dForward(exec, s.a[l], kPool, s.p[l], volumeOf(s.p[l].block()), path);
    }
  }
  for (std::size_t l = s.layers.size(); l-- > 0;) {
    const ConvLayer& L = s.layers[l];
    const Box zbox = volumeOf(s.z[l].block()), xbox = volumeOf(s.x[l].block());
    if constexpr (Reference) {
      if (L.pool)
        reference::avgPool3dBackward(exec, s.dp[l], kPool, s.da[l], zbox, s.dp[l].block().owned());
      reference::leakyReluBackward(exec, s.z[l], s.da[l], kSlope, s.dz[l], zbox);
      reference::conv3dBackwardFilter(exec, s.x[l], s.dz[l], L.g, s.dw[l], s.none, zbox, false);
      reference::conv3dBackwardData(exec, s.dz[l], s.w[l], L.g, s.dx[l], xbox);
    } else {
      if (L.pool)
        avgPool3dBackward(exec, s.dp[l], kPool, s.da[l], zbox, s.dp[l].block().owned(), path);
      leakyReluBackward(exec, s.z[l], s.da[l], kSlope, s.dz[l], zbox, path);
      conv3dBackwardFilter(exec, s.x[l], s.dz[l], L.g, s.dw[l], s.none, zbox, false, path);
      conv3dBackwardData(exec, s.dz[l], s.w[l], L.g, s.dx[l], xbox, s.dz[l].block().owned(), path);
    }
  }
  exec.fence();
}

// Fills the owned cells of a host tensor (ghosts stay zero) or a whole host View.
template <class T>
void fillOwned(const HaloTensor<T, Kokkos::HostSpace>& t, std::uint64_t seed) {
  const auto o = t.owned();
  std::uint64_t k = 0;
  for (std::size_t n = 0; n < o.extent(0); ++n)
    for (std::size_t c = 0; c < o.extent(1); ++c)
      for (std::size_t d = 0; d < o.extent(2); ++d)
        for (std::size_t h = 0; h < o.extent(3); ++h)
          for (std::size_t w = 0; w < o.extent(4); ++w)
            o(n, c, d, h, w) = T(valueAt(seed, k++));
}
template <class View>
void fillView(const View& v, std::uint64_t seed, double scale) {
  for (std::size_t k = 0; k < v.span(); ++k)
    v.data()[k] = typename View::value_type(scale * valueAt(seed, k));
}

template <class T>
void checkStack(index_t samples, index_t input, double width, KernelPath path) {
  using Memory = Exec::memory_space;
  const auto convs = cosmoflowConvs(4, input, width);
  Stack<T, Kokkos::HostSpace> ref(convs, samples, input);
  Stack<T, Memory> dev(convs, samples, input);

  // Inputs on the host: x0, the weights (scaled as He initialisation, so activations stay O(1)),
  // and the gradient of the stack's output; then copied to the device stack.
  fillOwned(ref.x[0], 1);
  fillOwned(ref.dout(), 2);
  for (std::size_t l = 0; l < convs.size(); ++l)
    fillView(ref.w[l], 10 + l, std::sqrt(6.0 / double(convs[l].in_ch * 27)));
  Kokkos::deep_copy(dev.x[0].view(), ref.x[0].view());
  Kokkos::deep_copy(dev.dout().view(), ref.dout().view());
  for (std::size_t l = 0; l < convs.size(); ++l)
    Kokkos::deep_copy(dev.w[l], ref.w[l]);

  run<true>(Host(), ref, path);
  run<false>(Exec(), dev, path);

  // fp32: seven layers of sums over up to 27 * 64 products, computed in another order.
  const double tol = std::is_same<T, float>::value ? 1e-4 : 1e-11;
  EXPECT_LE(testing::maxRelError(dev.out().view(), ref.out().view()), tol) << "forward output";
  EXPECT_LE(testing::maxRelError(dev.dx[0].view(), ref.dx[0].view()), tol) << "input gradient";
  for (std::size_t l = 0; l < convs.size(); ++l) {
    EXPECT_LE(testing::maxRelError(dev.a[l].view(), ref.a[l].view()), tol) << "activation " << l;
    EXPECT_LE(testing::maxRelError(dev.dw[l], ref.dw[l]), tol) << "weight gradient " << l;
  }
}

// 32^3 at a quarter of the channels (4 -> 4, 8, 16, 32, 64, 64, 64): the whole schedule (four
// pools, the stride-2 convolution, three convolutions on 2^3) in a second of naive host code.
HALO3D_FLOAT_DOUBLE_TESTS(CosmoFlowStack, ForwardBackwardMatchesReferenceFloat,
                          ForwardBackwardMatchesReferenceDouble, checkStack,
                          (2, 32, 0.25, KernelPath::Fastest), (2, 32, 0.25, KernelPath::Fastest))
HALO3D_FLOAT_DOUBLE_TESTS(CosmoFlowStack, DevicePathMatchesReferenceFloat,
                          DevicePathMatchesReferenceDouble, checkStack,
                          (2, 32, 0.25, KernelPath::Device), (2, 32, 0.25, KernelPath::Device))

}  // namespace
}  // namespace halo3d::kernels
