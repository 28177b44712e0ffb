// conv3d's three passes in bf16 against float, in the same run: halo3d's float kernels, halo3d's
// bf16 kernels (Conv3dBf16.hpp: bf16 activations and their gradients, float weights rounded to
// bf16, float sums, float dw and db) and oneDNN's bf16 convolutions (src, weights, dst and their
// data gradients bf16, bias and the weight and bias gradients f32; on AVX512-BF16 CPUs oneDNN 2.6
// runs its avx512_core_bf16 kernels), on the shapes (a)-(e) of bench_conv3d_onednn. Names:
// conv3d_<pass>_<f32|bf16>/<shape> (halo3d) and onednn_conv3d_<pass>_bf16/<shape>, pass fwd,
// bwd_data or bwd_filter. `engine` says whether halo3d's bf16 ran its vdpbf16ps engine (1) or the
// generic kernel (0).
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

void benchFloat(benchmark::State& state, Conv3dShape s, Pass pass) {
  const Conv3dBuffers<Memory> c(s, /*bias=*/true);
  fillOwned(c.x);
  const Exec exec;
  timeFenced(state, exec, [&] { c.run(exec, pass); });
  setCounters(state, s);
}

void benchBf16(benchmark::State& state, Conv3dShape s, Pass pass) {
  const Conv3dBuffers<Memory> c(s, /*bias=*/true);  // the float weights, bias and gradients
  const TensorBlock in =
      TensorBlock::whole({1, s.in_ch, s.extent, s.extent, s.extent}, HaloWidths::uniform(s.pad));
  HaloTensor<bf16, Memory> x("x", in), dx("dx", in), y("y", c.y.block());
  fillOwned(x);
  fillOwned(y);  // also dy
  const Exec exec;
  timeFenced(state, exec, [&] {
    switch (pass) {
      case Pass::Forward:
        return kernels::conv3dForwardBf16(exec, x, c.w, c.b, c.g, y, c.out_volume);
      case Pass::BackwardData:
        return kernels::conv3dBackwardDataBf16(exec, y, c.w, c.g, dx, c.in_volume);
      case Pass::BackwardFilter:
        return kernels::conv3dBackwardFilterBf16(exec, x, y, c.g, c.dw, c.db, c.out_volume, false);
    }
  });
  setCounters(state, s);
  state.counters["engine"] = kernels::conv3dBf16HostEngine(c.g);
}

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

void benchOneDnnBf16(benchmark::State& state, Conv3dShape s, Pass pass) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const memory::dims src{1, s.in_ch, s.extent, s.extent, s.extent},
      dst{1, s.out_ch, s.outExtent(), s.outExtent(), s.outExtent()};
  const memory::dims wei{s.out_ch, s.in_ch, s.kernel, s.kernel, s.kernel}, bia{s.out_ch},
      strides{s.stride, s.stride, s.stride}, pad{s.pad, s.pad, s.pad};
  // Plain float data, reordered (converted) once into oneDNN's bf16 layouts, untimed.
  memory src_plain({src, dt::f32, tag::ncdhw}, eng), wei_plain({wei, dt::f32, tag::oidhw}, eng);
  memory dst_plain({dst, dt::f32, tag::ncdhw}, eng), bia_mem({bia, dt::f32, tag::x}, eng);
  fillPlain(src_plain, 1);
  fillPlain(dst_plain, 2);
  fillPlain(wei_plain, 3);
  fillPlain(bia_mem, 4);
  const memory::desc src_any(src, dt::bf16, tag::any), wei_any(wei, dt::bf16, tag::any),
      dst_any(dst, dt::bf16, tag::any), bia_md(bia, dt::f32, tag::x);
  const dnnl::convolution_forward::primitive_desc fwd_pd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src_any, wei_any,
       bia_md, dst_any, strides, pad, pad},
      eng);
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
  std::string impl;
  switch (pass) {
    case Pass::Forward:
      prim = dnnl::convolution_forward(fwd_pd);
      args = {{DNNL_ARG_SRC, toPrimitive(eng, strm, src_plain, fwd_pd.src_desc())},
              {DNNL_ARG_WEIGHTS, toPrimitive(eng, strm, wei_plain, fwd_pd.weights_desc())},
              {DNNL_ARG_BIAS, bia_mem},
              {DNNL_ARG_DST, memory(fwd_pd.dst_desc(), eng)}};
      impl = fwd_pd.impl_info_str();
      break;
    case Pass::BackwardData: {
      const dnnl::convolution_backward_data::primitive_desc pd(
          {dnnl::algorithm::convolution_direct, src_any, wei_any, dst_any, strides, pad, pad}, eng,
          fwd_pd);
      prim = dnnl::convolution_backward_data(pd);
      args = {{DNNL_ARG_DIFF_DST, toPrimitive(eng, strm, dst_plain, pd.diff_dst_desc())},
              {DNNL_ARG_WEIGHTS, toPrimitive(eng, strm, wei_plain, pd.weights_desc())},
              {DNNL_ARG_DIFF_SRC, memory(pd.diff_src_desc(), eng)}};
      impl = pd.impl_info_str();
      break;
    }
    case Pass::BackwardFilter: {
      // Float weight and bias gradients, as halo3d's.
      const dnnl::convolution_backward_weights::primitive_desc pd(
          {dnnl::algorithm::convolution_direct, src_any, memory::desc(wei, dt::f32, tag::any),
           bia_md, dst_any, strides, pad, pad},
          eng, fwd_pd);
      prim = dnnl::convolution_backward_weights(pd);
      args = {{DNNL_ARG_SRC, toPrimitive(eng, strm, src_plain, pd.src_desc())},
              {DNNL_ARG_DIFF_DST, toPrimitive(eng, strm, dst_plain, pd.diff_dst_desc())},
              {DNNL_ARG_DIFF_WEIGHTS, memory(pd.diff_weights_desc(), eng)},
              {DNNL_ARG_DIFF_BIAS, memory(bia_md, eng)}};
      impl = pd.impl_info_str();
      break;
    }
  }
  strm.wait();
  timeManually(
      state, [&](const char*) { strm.wait(); }, [&] { prim.execute(strm, args); });
  setCounters(state, s);
  state.SetLabel(impl);
}

const bool registered = [] {
  for (const Conv3dShape& s : kConv3dShapes)
    for (const Pass pass : kPasses) {
      const std::string op = std::string("conv3d_") + passName(pass);
      const std::string shape = std::string("/") + s.name;
      benchmark::RegisterBenchmark((op + "_f32" + shape).c_str(), benchFloat, s, pass)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark((op + "_bf16" + shape).c_str(), benchBf16, s, pass)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("onednn_" + op + "_bf16" + shape).c_str(), benchOneDnnBf16, s,
                                   pass)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
