// Strided conv3d forward, backward-data and backward-filter: halo3d's kernels and oneDNN's in the
// same binary, on the strided shapes of the CosmoFlow model, so that both are measured in the same
// run. Shapes C<in>_K<out>_D<n>_s2 are N=1, n^3 inputs, 3^3 kernels, padding 1, stride 2: the
// model's conv4 (features.9) at 128^3 inputs (D16) and at 256^3 inputs (D32), plus a tiny `smoke`
// shape that CTest runs. Both libraries honour OMP_NUM_THREADS, reported as `threads`.
//
// Timing and oneDNN setup as in bench_conv3d_onednn.cpp (manual time, fenced on both sides; oneDNN
// in its preferred blocked layouts, reordered outside the timed region). `GFLOP/s` counts
// 2 N O I k^3 Do Ho Wo flops for every pass.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>
#include <dnnl.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "support/ConvPasses.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Shape = Conv3dShape;

const Shape kStridedShapes[] = {{"smoke_C2_K4_D9_s2", 2, 4, 9, 3, 2, 1},
                                {"C64_K128_D16_s2", 64, 128, 16, 3, 2, 1},
                                {"C64_K128_D32_s2", 64, 128, 32, 3, 2, 1}};

void setCounters(benchmark::State& state, const Shape& s, int threads) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(s.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = threads;
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
  const Conv3dBuffers<Exec::memory_space> c(s, /*bias=*/true);
  fillInput(c.x, s);
  const Exec exec;
  timeFenced(state, exec, [&] { c.run(exec, pass); });
  setCounters(state, s, exec.concurrency());
}

// oneDNN.

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// A oneDNN memory in the primitive's layout, filled from a plain-layout memory by a reorder.
memory toPrimitive(const dnnl::engine& eng, dnnl::stream& strm, memory& plain,
                   const memory::desc& md) {
  if (plain.get_desc() == md) return plain;
  memory m(md, eng);
  dnnl::reorder(plain, m).execute(strm, plain, m);
  return m;
}

void fillPlain(memory& m, std::uint32_t seed) {
  float* p = static_cast<float*>(m.get_data_handle());
  const std::size_t n = m.get_desc().get_size() / sizeof(float);
  for (std::size_t k = 0; k < n; ++k)
    p[k] = float((k * 2654435761u ^ seed) % 2001) / 1000.0f - 1.0f;
}

void benchOneDnn(benchmark::State& state, Shape s, Pass pass) {
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
  timeManually(
      state, [&](const char*) { strm.wait(); }, [&] { prim.execute(strm, args); });
  setCounters(state, s, Kokkos::DefaultHostExecutionSpace().concurrency());
}

// Each shape's six benchmarks registered next to each other, ours then oneDNN's, pass by pass.
const bool registered = [] {
  for (const Shape& s : kStridedShapes)
    for (Pass pass : kPasses) {
      const std::string op = std::string("conv3d_") + passName(pass) + "/" + s.name;
      benchmark::RegisterBenchmark(op.c_str(), benchHalo3d, s, pass)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("onednn_" + op).c_str(), benchOneDnn, s, pass)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
