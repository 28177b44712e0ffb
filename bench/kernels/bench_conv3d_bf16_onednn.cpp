// conv3d forward in bf16 against float, in the same run: halo3d's float kernel, halo3d's bf16
// kernel (conv3dForwardBf16: bf16 x and y, float weights rounded to bf16, float sums) and oneDNN's
// bf16 convolution (src, weights and dst bf16, bias f32; on AVX512-BF16 CPUs oneDNN 2.6 runs its
// avx512_core_bf16 kernels), on the shapes (a)-(e) of bench_conv3d_onednn. Names:
// conv3d_fwd_<f32|bf16>/<shape> (halo3d) and onednn_conv3d_fwd_bf16/<shape>. `engine` says whether
// halo3d's bf16 ran its vdpbf16ps engine (1) or the generic kernel (0).
//
// Timing as in bench_conv3d_onednn: manual time fenced on both sides, buffers filled once outside
// the timed region, oneDNN's reorders from plain ncdhw/oidhw not timed. GFLOP/s counts 2 O I k^3
// Do Ho Wo for every variant.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>
#include <dnnl.hpp>

#include <string>
#include <unordered_map>

#include "halo3d/core/BFloat16.hpp"
#include "halo3d/kernels/Conv3dBf16.hpp"
#include "support/ConvPasses.hpp"
#include "support/ManualTime.hpp"
#include "support/OneDnnMemory.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;

void setCounters(benchmark::State& state, const Conv3dShape& s) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(s.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = Kokkos::DefaultHostExecutionSpace().concurrency();
}

// x's owned cells from a hash of their index (ghosts stay zero: the padding), as T.
template <class T>
void fillOwned(const HaloTensor<T, Memory>& x) {
  const auto xo = x.owned();
  Kokkos::parallel_for(
      "fill x",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>(
          {0, 0, 0}, {index_t(xo.extent(1)), index_t(xo.extent(2)), index_t(xo.extent(3))}),
      KOKKOS_LAMBDA(index_t ch, index_t d, index_t h) {
        for (index_t w = 0; w < index_t(xo.extent(4)); ++w)
          xo(0, ch, d, h, w) = T(hashValue(std::size_t(((ch * 977 + d) * 977 + h) * 977 + w), 4));
      });
}

void benchFloat(benchmark::State& state, Conv3dShape s) {
  const Conv3dBuffers<Memory> c(s, /*bias=*/true);
  fillOwned(c.x);
  const Exec exec;
  timeFenced(state, exec, [&] { c.run(exec, Pass::Forward); });
  setCounters(state, s);
}

void benchBf16(benchmark::State& state, Conv3dShape s) {
  const Conv3dBuffers<Memory> c(s, /*bias=*/true);  // the float weights and bias
  const TensorBlock in =
      TensorBlock::whole({1, s.in_ch, s.extent, s.extent, s.extent}, HaloWidths::uniform(s.pad));
  HaloTensor<bf16, Memory> x("x", in), y("y", c.y.block());
  fillOwned(x);
  const Exec exec;
  timeFenced(state, exec,
             [&] { kernels::conv3dForwardBf16(exec, x, c.w, c.b, c.g, y, c.out_volume); });
  setCounters(state, s);
  state.counters["engine"] = kernels::conv3dBf16HostEngine(c.g) ? 1 : 0;
}

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

void benchOneDnnBf16(benchmark::State& state, Conv3dShape s) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::dims src{1, s.in_ch, s.extent, s.extent, s.extent},
      dst{1, s.out_ch, s.outExtent(), s.outExtent(), s.outExtent()};
  const memory::dims wei{s.out_ch, s.in_ch, s.kernel, s.kernel, s.kernel}, bia{s.out_ch},
      strides{s.stride, s.stride, s.stride}, pad{s.pad, s.pad, s.pad};
  // Plain float data, reordered (converted) once into oneDNN's bf16 layouts, untimed.
  memory src_plain({src, dt::f32, tag::ncdhw}, eng), wei_plain({wei, dt::f32, tag::oidhw}, eng);
  memory bia_mem({bia, dt::f32, tag::x}, eng);
  fillPlain(src_plain, 1);
  fillPlain(wei_plain, 3);
  fillPlain(bia_mem, 4);
  const dnnl::convolution_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
       memory::desc(src, dt::bf16, tag::any), memory::desc(wei, dt::bf16, tag::any),
       memory::desc(bia, dt::f32, tag::x), memory::desc(dst, dt::bf16, tag::any), strides, pad,
       pad},
      eng);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, toPrimitive(eng, strm, src_plain, pd.src_desc())},
      {DNNL_ARG_WEIGHTS, toPrimitive(eng, strm, wei_plain, pd.weights_desc())},
      {DNNL_ARG_BIAS, bia_mem},
      {DNNL_ARG_DST, memory(pd.dst_desc(), eng)}};
  strm.wait();
  const dnnl::convolution_forward prim(pd);
  timeManually(
      state, [&](const char*) { strm.wait(); }, [&] { prim.execute(strm, args); });
  setCounters(state, s);
  state.SetLabel(pd.impl_info_str());
}

const bool registered = [] {
  for (const Conv3dShape& s : kConv3dShapes) {
    const std::string shape = std::string("/") + s.name;
    benchmark::RegisterBenchmark(("conv3d_fwd_f32" + shape).c_str(), benchFloat, s)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("conv3d_fwd_bf16" + shape).c_str(), benchBf16, s)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("onednn_conv3d_fwd_bf16" + shape).c_str(), benchOneDnnBf16, s)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
