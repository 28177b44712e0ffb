// conv3d forward, backward-data and backward-filter: halo3d's kernels and oneDNN's in the same
// binary, on the same shapes, so that both are measured in the same run. Shapes C<in>_K<out>_D<n>
// are N=1, n^3 volumes, 3^3 kernels, padding 1, stride 1: (a) C4_K16_D128, (b) C16_K32_D64,
// (c) C32_K64_D32, (d) C64_K64_D16, (e) C32_K32_D64, plus a tiny `smoke` shape that CTest runs.
// Both libraries honour OMP_NUM_THREADS, reported as `threads`.
//
// Timing: manual time, fenced on both sides (Kokkos fence / oneDNN stream wait before starting and
// stopping the clock). `GFLOP/s` counts 2 N O I k^3 D H W flops for every pass. Buffers are
// allocated once and filled once outside the timed region (HaloTensors are zero-initialised by
// construction: their ghosts are the padding; parameter Views are allocated WithoutInitializing).
//
// oneDNN (Debian libdnnl 2.6.3, CPU engine, convolution_direct, f32, forward_training /
// backward_data / backward_weights with bias): the primitives use format_tag::any, i.e. oneDNN's
// preferred blocked layouts; the data are reordered from/to plain ncdhw / oidhw outside the timed
// region, so its figures exclude layout conversion, which halo3d never needs.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>
#include <dnnl.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "halo3d/core/HaloTensor.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/core/TensorBlock.hpp"
#include "halo3d/kernels/Conv3d.hpp"

namespace {

using halo3d::Box;
using halo3d::HaloTensor;
using halo3d::HaloWidths;
using halo3d::index_t;
using halo3d::TensorBlock;
using halo3d::WindowGeometry;
using Exec = Kokkos::DefaultExecutionSpace;
using Clock = std::chrono::steady_clock;

struct Shape {
  const char* name;
  index_t in_ch, out_ch, extent;
  double flops() const {
    return 2.0 * double(out_ch * in_ch) * 27.0 * double(extent * extent * extent);
  }
};

const Shape kShapes[] = {{"smoke_C2_K4_D8", 2, 4, 8}, {"C4_K16_D128", 4, 16, 128},
                         {"C16_K32_D64", 16, 32, 64}, {"C32_K64_D32", 32, 64, 32},
                         {"C64_K64_D16", 64, 64, 16}, {"C32_K32_D64", 32, 32, 64}};

enum class Pass { Forward, BackwardData, BackwardFilter };
const char* passName(Pass p) {
  return p == Pass::Forward ? "fwd" : (p == Pass::BackwardData ? "bwd_data" : "bwd_filter");
}

// Deterministic values in [-1, 1) from the index: fills large buffers quickly, in parallel.
template <class View>
void fill(const View& v, std::uint32_t seed) {
  auto* p = v.data();
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec>(0, v.span()), KOKKOS_LAMBDA(std::size_t k) {
        std::uint32_t h = std::uint32_t(k) * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[k] = float(h & 0xffffff) / float(0x800000) - 1.0f;
      });
}

void setCounters(benchmark::State& state, const Shape& s, int threads) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(s.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = threads;
}

void benchHalo3d(benchmark::State& state, Shape s, Pass pass) {
  const WindowGeometry g = WindowGeometry::cubic(3, 1, 1);
  const Box volume = Box::fromExtents({s.extent, s.extent, s.extent});
  const HaloTensor<float> x(
      "x", TensorBlock::whole({1, s.in_ch, s.extent, s.extent, s.extent}, HaloWidths::uniform(1)));
  const HaloTensor<float> dx(
      "dx", TensorBlock::whole({1, s.in_ch, s.extent, s.extent, s.extent}, HaloWidths::uniform(1)));
  const HaloTensor<float> y("y", TensorBlock::whole({1, s.out_ch, s.extent, s.extent, s.extent}));
  const auto noinit = Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("w"));
  Kokkos::View<float*****, Kokkos::LayoutRight> w(noinit, s.out_ch, s.in_ch, 3, 3, 3),
      dw(noinit, s.out_ch, s.in_ch, 3, 3, 3);
  Kokkos::View<float*, Kokkos::LayoutRight> b(noinit, s.out_ch), db(noinit, s.out_ch);
  Kokkos::deep_copy(x.owned(), 0.5f);
  fill(w, 1);
  fill(b, 2);
  fill(y.view(), 3);  // dy for the backward passes
  Kokkos::parallel_for(
      "fill x",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>({0, 0, 0}, {s.extent, s.extent, s.extent}),
      KOKKOS_LAMBDA(index_t d, index_t h, index_t c) {
        for (index_t i = 0; i < s.in_ch; ++i)
          x.view()(0, i, d + 1, h + 1, c + 1) = float((d * 7 + h * 3 + c + i) % 17) / 8.0f - 1.0f;
      });
  const Exec exec;
  auto run = [&] {
    switch (pass) {
      case Pass::Forward:
        halo3d::kernels::conv3dForward(exec, x, w, b, g, y, volume);
        break;
      case Pass::BackwardData:
        halo3d::kernels::conv3dBackwardData(exec, y, w, g, dx, volume);
        break;
      case Pass::BackwardFilter:
        halo3d::kernels::conv3dBackwardFilter(exec, x, y, g, dw, db, volume, false);
        break;
    }
  };
  run();  // warm-up: first-touch of the outputs
  for (auto _ : state) {
    halo3d::fence(exec, "before timing");
    const auto t0 = Clock::now();
    run();
    halo3d::fence(exec, "conv3d done");
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
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
  const memory::dims src{1, s.in_ch, s.extent, s.extent, s.extent},
      dst{1, s.out_ch, s.extent, s.extent, s.extent};
  const memory::dims wei{s.out_ch, s.in_ch, 3, 3, 3}, bia{s.out_ch}, strides{1, 1, 1}, pad{1, 1, 1};
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
  prim.execute(strm, args);  // warm-up
  strm.wait();
  for (auto _ : state) {
    strm.wait();
    const auto t0 = Clock::now();
    prim.execute(strm, args);
    strm.wait();
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  setCounters(state, s, Kokkos::DefaultHostExecutionSpace().concurrency());
}

// Each shape's six benchmarks registered next to each other, ours then oneDNN's, pass by pass.
const bool registered = [] {
  for (const Shape& s : kShapes)
    for (Pass pass : {Pass::Forward, Pass::BackwardData, Pass::BackwardFilter}) {
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
