// conv3d forward, backward-data and backward-filter: halo3d's kernels and oneDNN's in the same
// binary, on the same shapes, so that both are measured in the same run. Shapes C<in>_K<out>_D<n>
// are N=1, n^3 volumes, 3^3 kernels, padding 1, stride 1: (a) C4_K16_D128, (b) C16_K32_D64,
// (c) C32_K64_D32, (d) C64_K64_D16, (e) C32_K32_D64, plus a tiny `smoke` shape that CTest runs; and
// C<in>_K<out>_D<n>_s2 with stride 2, CosmoFlow's strided convolution (and a strided `smoke`).
// Both libraries honour OMP_NUM_THREADS, reported as `threads`. `pct_of_fma_peak` puts the rate of
// the products that read data (dataFlops) against the fp32 FMA peak measured once in the same
// process, with as many threads (support/FmaPeak.hpp; row `fma_peak` reports it): the machine's
// limit for any convolution.
//
// Timing: manual time, fenced on both sides (Kokkos fence / oneDNN stream wait before starting and
// stopping the clock). `GFLOP/s` counts 2 N O I k^3 Do Ho Wo flops for every pass. Buffers are
// allocated once and filled once outside the timed region (HaloTensors are zero-initialised by
// construction: their ghosts are the padding; parameter Views are allocated WithoutInitializing).
//
// oneDNN (Debian libdnnl 2.6.3, CPU engine, convolution_direct, f32, forward_training /
// backward_data / backward_weights with bias): the primitives use format_tag::any, i.e. oneDNN's
// preferred blocked layouts; the data are reordered from/to plain ncdhw / oidhw outside the timed
// region, so its figures exclude layout conversion. halo3d keeps its data in plain layouts, but its
// host forward and backward-data repack the weights into channel blocks on every call, inside its
// timed region (kernels/impl/Conv3dHostDirect.hpp, packWeights; 1.2% of (d)'s forward and
// backward-data samples at one thread under perf, 2026-12-05), while oneDNN's weight reorder is
// left out.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>
#include <dnnl.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "support/ConvPasses.hpp"
#include "support/FmaPeak.hpp"
#include "support/ManualTime.hpp"
#include "support/OneDnnMemory.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Shape = Conv3dShape;

// FLOP/s of the FMA peak, measured the first time it is asked for: before the first row's timing.
double fmaPeak() {
  static const double peak = fmaPeakFlopsPerSecond();
  return peak;
}

// 2 N O I times the (output cell, tap) pairs whose input cell lies inside the volume: the products
// that read data. Neither library multiplies the padding (halo3d leaves out the kd and kh taps that
// read only padding; oneDNN computes each output row's tap range), so this is what both compute,
// bar the padding W taps inside vectors: 88% of s.flops() on (d)'s 16^3, 98% on (a)'s 128^3.
double dataFlops(const Shape& s) {
  double pairs = 1.0;
  for (int d = 0; d < 3; ++d) {
    index_t count = 0;
    for (index_t o = 0; o < s.outExtent(); ++o)
      for (int k = 0; k < s.kernel; ++k) {
        const index_t i = o * s.stride - s.pad + k;
        count += i >= 0 && i < s.extent;
      }
    pairs *= double(count);
  }
  return 2.0 * double(s.out_ch * s.in_ch) * pairs;
}

// `seconds`: the timed seconds of all iterations. `on_host`: the row ran on the host's threads,
// which the FMA peak measures (not halo3d's rows in a CUDA build).
void setCounters(benchmark::State& state, const Shape& s, int threads, double seconds,
                 bool on_host) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(s.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  if (on_host)
    state.counters["pct_of_fma_peak"] =
        100.0 * dataFlops(s) * double(state.iterations()) / seconds / fmaPeak();
  state.counters["threads"] = threads;
}

void benchFmaPeak(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(fmaPeak());
  state.counters["GFLOP/s"] = fmaPeak() * 1e-9;
  state.counters["threads"] = Kokkos::DefaultHostExecutionSpace().concurrency();
}

// A pattern in x's owned cells (its ghosts stay zero: the padding).
void fillInput(const HaloTensor<float>& x, const Shape& s) {
  const auto xv = x.view();
  const index_t channels = s.in_ch;
  const index_t pad = s.pad;
  Kokkos::parallel_for(
      "fill x",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>({0, 0, 0}, {s.extent, s.extent, s.extent}),
      KOKKOS_LAMBDA(index_t d, index_t h, index_t c) {
        for (index_t i = 0; i < channels; ++i)
          xv(0, i, d + pad, h + pad, c + pad) = float((d * 7 + h * 3 + c + i) % 17) / 8.0f - 1.0f;
      });
}

void benchHalo3d(benchmark::State& state, Shape s, Pass pass) {
  fmaPeak();
  const Conv3dBuffers<Exec::memory_space> c(s, /*bias=*/true);
  fillInput(c.x, s);
  const Exec exec;
  const double seconds = timeFenced(state, exec, [&] { c.run(exec, pass); });
  setCounters(state, s, exec.concurrency(), seconds,
              std::is_same_v<Exec, Kokkos::DefaultHostExecutionSpace>);
}

// oneDNN.

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

void benchOneDnn(benchmark::State& state, Shape s, Pass pass) {
  fmaPeak();
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const index_t o = s.outExtent(), k = s.kernel;
  const memory::dims src{1, s.in_ch, s.extent, s.extent, s.extent}, dst{1, s.out_ch, o, o, o};
  const memory::dims wei{s.out_ch, s.in_ch, k, k, k}, bia{s.out_ch},
      strides{s.stride, s.stride, s.stride}, pad{s.pad, s.pad, s.pad};
  const memory::desc src_any(src, dt::f32, tag::any), dst_any(dst, dt::f32, tag::any);
  const memory::desc wei_any(wei, dt::f32, tag::any), bia_md(bia, dt::f32, tag::x);
  memory src_plain({src, dt::f32, tag::ncdhw}, eng), dst_plain({dst, dt::f32, tag::ncdhw}, eng);
  memory wei_plain({wei, dt::f32, tag::oidhw}, eng), bia_mem(bia_md, eng);
  fillPlain(src_plain, 1);
  fillPlain(dst_plain, 2);
  fillPlain(wei_plain, 3);
  fillPlain(bia_mem, 4);

  const dnnl::convolution_forward::primitive_desc fwd_pd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src_any, wei_any,
       bia_md, dst_any, strides, pad, pad},
      eng);
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
  switch (pass) {
    case Pass::Forward: {
      prim = dnnl::convolution_forward(fwd_pd);
      args = {{DNNL_ARG_SRC, toPrimitive(eng, strm, src_plain, fwd_pd.src_desc())},
              {DNNL_ARG_WEIGHTS, toPrimitive(eng, strm, wei_plain, fwd_pd.weights_desc())},
              {DNNL_ARG_BIAS, bia_mem},
              {DNNL_ARG_DST, memory(fwd_pd.dst_desc(), eng)}};
      break;
    }
    case Pass::BackwardData: {
      const dnnl::convolution_backward_data::primitive_desc pd(
          {dnnl::algorithm::convolution_direct, src_any, wei_any, dst_any, strides, pad, pad}, eng,
          fwd_pd);
      prim = dnnl::convolution_backward_data(pd);
      args = {{DNNL_ARG_DIFF_DST, toPrimitive(eng, strm, dst_plain, pd.diff_dst_desc())},
              {DNNL_ARG_WEIGHTS, toPrimitive(eng, strm, wei_plain, pd.weights_desc())},
              {DNNL_ARG_DIFF_SRC, memory(pd.diff_src_desc(), eng)}};
      break;
    }
    case Pass::BackwardFilter: {
      const dnnl::convolution_backward_weights::primitive_desc pd(
          {dnnl::algorithm::convolution_direct, src_any, wei_any, bia_md, dst_any, strides, pad,
           pad},
          eng, fwd_pd);
      prim = dnnl::convolution_backward_weights(pd);
      args = {{DNNL_ARG_SRC, toPrimitive(eng, strm, src_plain, pd.src_desc())},
              {DNNL_ARG_DIFF_DST, toPrimitive(eng, strm, dst_plain, pd.diff_dst_desc())},
              {DNNL_ARG_DIFF_WEIGHTS, memory(pd.diff_weights_desc(), eng)},
              {DNNL_ARG_DIFF_BIAS, memory(bia_md, eng)}};
      break;
    }
  }
  const double seconds = timeManually(
      state, [&](const char*) { strm.wait(); }, [&] { prim.execute(strm, args); });
  setCounters(state, s, Kokkos::DefaultHostExecutionSpace().concurrency(), seconds, true);
}

// CosmoFlow's strided convolution (features.9: 64 -> 128, 3^3, stride 2, padding 1) at 128^3 and
// 256^3 model inputs, and a tiny strided shape for CTest.
const Shape kStridedShapes[] = {{"smoke_C2_K4_D9_s2", 2, 4, 9, 3, 2, 1},
                                {"C64_K128_D16_s2", 64, 128, 16, 3, 2, 1},
                                {"C64_K128_D32_s2", 64, 128, 32, 3, 2, 1}};

// Each shape's six benchmarks registered next to each other, ours then oneDNN's, pass by pass.
void registerShape(const Shape& s) {
  for (Pass pass : kPasses) {
    const std::string op = std::string("conv3d_") + passName(pass) + "/" + s.name;
    benchmark::RegisterBenchmark(op.c_str(), benchHalo3d, s, pass)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("onednn_" + op).c_str(), benchOneDnn, s, pass)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

const bool registered = [] {
  benchmark::RegisterBenchmark("fma_peak", benchFmaPeak)->Iterations(1);
  for (const Shape& s : kConv3dShapes)
    registerShape(s);
  for (const Shape& s : kStridedShapes)
    registerShape(s);
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
