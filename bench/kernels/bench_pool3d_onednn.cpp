// 3D pooling, fp32, one sample: halo3d's host path and oneDNN's pooling on every pooling layer of
// the two models (bench/support/Pool3dRows.hpp), each in its model's kind, forward and backward, in
// the same process, against the same STREAM anchor. It answers how far from the anchor a production
// library's pooling stands on these shapes: the small volumes (4^3-16^3) are bound by the cost of a
// call, not by bandwidth. Names: <kind>pool3d_<pass>/<shape> (halo3d), onednn_<kind>pool3d_<pass>/
// <shape> (oneDNN, plain ncdhw as halo3d holds its tensors) and onednn16c_... (oneDNN's blocked
// nCdhw16c, the layout its convolutions hand over; channels a multiple of 16 only).
//
// Bytes are each library's own compulsory traffic: x and y, plus halo3d's int64 argmax or oneDNN's
// max-pooling workspace (its size as oneDNN reports it). Manual time, fenced (Kokkos fence / oneDNN
// stream wait) on both sides.
//
// oneDNN (Debian libdnnl 2.6.3, CPU engine): pooling_forward forward_training (max with workspace,
// avg_include_padding: PyTorch's count_include_pad) and pooling_backward with the forward's
// primitive descriptor; buffers filled outside the timed region.
#include <benchmark/benchmark.h>
#include <Kokkos_Core.hpp>
#include <dnnl.hpp>

#include <string>
#include <unordered_map>

#include "support/ManualTime.hpp"
#include "support/OneDnnMemory.hpp"
#include "support/Pool3dRows.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;

struct Row {
  PoolShape s;
  bool is_max, backward;
};

void benchHalo3d(benchmark::State& state, Row r) {
  const Exec exec;
  const PoolBuffers<float, Exec::memory_space> b(r.s.c, r.s.d, r.s.g);
  streamBytesPerSecond();
  const double seconds =
      timeFenced(state, exec, [&] { b.run(exec, r.is_max, r.backward, KernelPath::Fastest); });
  setPoolCounters(state, poolBytes(r.s.c, r.s.d, r.s.g, r.is_max, sizeof(float)), seconds);
}

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

void benchOneDnn(benchmark::State& state, Row r, tag layout) {
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  const WindowGeometry& g = r.s.g;
  const Extents3 o = g.outputExtents({r.s.d, r.s.d, r.s.d});
  const memory::desc src({1, r.s.c, r.s.d, r.s.d, r.s.d}, dt::f32, layout);
  const memory::desc dst({1, r.s.c, o[0], o[1], o[2]}, dt::f32, layout);
  const memory::dims strides{g.stride[0], g.stride[1], g.stride[2]},
      kernel{g.kernel[0], g.kernel[1], g.kernel[2]}, pad{g.padding[0], g.padding[1], g.padding[2]};
  const dnnl::algorithm alg =
      r.is_max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_include_padding;
  const dnnl::pooling_forward::primitive_desc fwd_pd(
      {dnnl::prop_kind::forward_training, alg, src, dst, strides, kernel, pad, pad}, eng);
  memory x(src, eng), y(dst, eng);
  fillPlain(x, 1);
  fillPlain(y, 2);
  memory ws;
  if (r.is_max) ws = memory(fwd_pd.workspace_desc(), eng);
  const double ws_bytes = r.is_max ? double(fwd_pd.workspace_desc().get_size()) : 0.0;
  dnnl::primitive fwd = dnnl::pooling_forward(fwd_pd);
  std::unordered_map<int, memory> fwd_args{{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}};
  if (r.is_max) fwd_args[DNNL_ARG_WORKSPACE] = ws;
  fwd.execute(strm, fwd_args);  // the workspace the backward reads
  strm.wait();
  dnnl::primitive prim = fwd;
  std::unordered_map<int, memory> args = fwd_args;
  if (r.backward) {
    const dnnl::pooling_backward::primitive_desc pd({alg, src, dst, strides, kernel, pad, pad}, eng,
                                                    fwd_pd);
    prim = dnnl::pooling_backward(pd);
    args = {{DNNL_ARG_DIFF_DST, y}, {DNNL_ARG_DIFF_SRC, x}};
    if (r.is_max) args[DNNL_ARG_WORKSPACE] = ws;
  }
  streamBytesPerSecond();
  const double seconds = timeManually(
      state, [&](const char*) { strm.wait(); }, [&] { prim.execute(strm, args); });
  setPoolCounters(state, double(src.get_size() + dst.get_size()) + ws_bytes, seconds);
}

const bool registered = [] {
  std::vector<PoolShape> shapes{{16, 64, "k2s2", WindowGeometry::cubic(2, 2)},
                                {4, 128, "k3s2p1", WindowGeometry::cubic(3, 2, 1)},
                                {2, 5, "k3s2p1", WindowGeometry::cubic(3, 2, 1)}};
  for (const PoolShape& s : modelPoolShapes())
    shapes.push_back(s);
  for (bool backward : {false, true})
    for (const PoolShape& s : shapes) {
      const bool is_max = std::string(s.window) == "k2s2";
      const bool smoke = s.d == 5;
      const std::string op = std::string(is_max ? "maxpool3d_" : "avgpool3d_") +
                             (backward ? "bwd/" : "fwd/") + (smoke ? "smoke" : s.name());
      const Row r{s, is_max, backward};
      benchmark::RegisterBenchmark(op.c_str(), benchHalo3d, r)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("onednn_" + op).c_str(), benchOneDnn, r, tag::ncdhw)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
      if (s.c % 16 == 0)
        benchmark::RegisterBenchmark(("onednn16c_" + op).c_str(), benchOneDnn, r, tag::nCdhw16c)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
    }
  return true;
}();

}  // namespace
}  // namespace halo3d::bench
