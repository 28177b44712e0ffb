#pragma once
// oneDNN's three passes of every convolution of an ideal step (support/IdealStep.hpp), set up once
// and timed on demand, so that a step benchmark can interleave them with its own steps.
//
// As in bench/kernels/bench_conv3d_onednn.cpp: CPU engine, f32, convolution_direct (transposed
// convolutions: deconvolution_direct), forward_training / backward_data / backward_weights, every
// tensor in oneDNN's preferred layout (format_tag::any): a chain of oneDNN layers never converts
// layouts, so none is timed. Buffers hold small finite values; the forward output doubles as the
// backward passes' output gradient (only the timing matters), the data gradient has its own buffer
// so that no pass feeds another's input. Include only where oneDNN is found (HALO3D_BENCH_ONEDNN).
#include <dnnl.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "support/IdealStep.hpp"

namespace halo3d::bench {

class OneDnnConvolutions {
 public:
  enum Pass { Forward = 0, BackwardData = 1, BackwardWeights = 2 };

  explicit OneDnnConvolutions(const std::vector<IdealConv>& convs)
      : _engine(dnnl::engine::kind::cpu, 0), _stream(_engine) {
    for (const IdealConv& c : convs)
      _convs.push_back(make(c));
    for (std::size_t i = 0; i < _convs.size(); ++i)  // first runs: JIT and first touch
      time(i);
  }

  std::size_t size() const { return _convs.size(); }

  // Seconds of each pass of convolution `i`, each fenced (0 for a pass the step does not run).
  std::array<double, 3> time(std::size_t i) {
    std::array<double, 3> t{0, 0, 0};
    for (int p = 0; p < 3; ++p) {
      Primitive& prim = _convs[i].pass[std::size_t(p)];
      if (!prim.run) continue;
      _stream.wait();
      const auto t0 = std::chrono::steady_clock::now();
      prim.primitive.execute(_stream, prim.args);
      _stream.wait();
      t[std::size_t(p)] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return t;
  }

 private:
  using memory = dnnl::memory;
  using dt = memory::data_type;
  using tag = memory::format_tag;

  struct Primitive {
    bool run = false;
    dnnl::primitive primitive;
    std::unordered_map<int, memory> args;
  };
  struct Conv {
    std::array<Primitive, 3> pass;
  };

  // A buffer of `md` filled with values in [-scale, scale).
  memory filled(const memory::desc& md, float scale) {
    memory m(md, _engine);
    float* p = static_cast<float*>(m.get_data_handle());
    const std::size_t n = md.get_size() / sizeof(float);
    Kokkos::parallel_for(
        "halo3d::bench::onednn_fill", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, n),
        [=](std::size_t k) { p[k] = scale * (float((k * 2654435761u) % 2001) / 1000.0f - 1.0f); });
    Kokkos::DefaultHostExecutionSpace().fence();
    return m;
  }

  static memory::dims dims5(index_t n, index_t c, const Extents3& e) {
    return {n, c, e[0], e[1], e[2]};
  }
  static memory::dims dims3(const std::array<int, 3>& a) { return {a[0], a[1], a[2]}; }

  Conv make(const IdealConv& c) {
    const memory::dims src = dims5(c.samples, c.in_channels, c.in),
                       dst = dims5(c.samples, c.out_channels, c.out);
    const memory::dims wei{c.out_channels, c.in_channels, c.kernel[0], c.kernel[1], c.kernel[2]};
    const memory::dims strides = dims3(c.stride), pad = dims3(c.padding);
    // Padding on the high side: what makes oneDNN's output extent the model's.
    memory::dims pad_r(3);
    for (int d = 0; d < 3; ++d) {
      const index_t in = c.in[std::size_t(d)], out = c.out[std::size_t(d)];
      const int k = c.kernel[std::size_t(d)], s = c.stride[std::size_t(d)];
      pad_r[std::size_t(d)] = c.transposed ? (in - 1) * s + k - out - pad[std::size_t(d)]
                                           : (out - 1) * s + k - in - pad[std::size_t(d)];
    }
    const memory::desc src_md(src, dt::f32, tag::any), dst_md(dst, dt::f32, tag::any),
        wei_md(wei, dt::f32, tag::any), bia_md({c.out_channels}, dt::f32, tag::x),
        no_bias;  // a zero desc: oneDNN's "no bias"
    const memory::desc& bias = c.bias ? bia_md : no_bias;
    const float ws = 0.05f;  // weights small enough that no value grows over iterations
    Conv conv;
    if (c.transposed) {
      const auto alg = dnnl::algorithm::deconvolution_direct;
      const dnnl::deconvolution_forward::primitive_desc fwd(
          {dnnl::prop_kind::forward_training, alg, src_md, wei_md, bias, dst_md, strides, pad,
           pad_r},
          _engine);
      const dnnl::deconvolution_backward_data::primitive_desc bwd_d(
          {alg, src_md, wei_md, dst_md, strides, pad, pad_r}, _engine, fwd);
      const dnnl::deconvolution_backward_weights::primitive_desc bwd_w(
          {alg, src_md, wei_md, bias, dst_md, strides, pad, pad_r}, _engine, fwd);
      assemble(conv, c, dnnl::deconvolution_forward(fwd), fwd.src_desc(), fwd.weights_desc(),
               fwd.dst_desc(), dnnl::deconvolution_backward_data(bwd_d), bwd_d.diff_src_desc(),
               bwd_d.diff_dst_desc(), bwd_d.weights_desc(),
               dnnl::deconvolution_backward_weights(bwd_w), bwd_w.src_desc(), bwd_w.diff_dst_desc(),
               bwd_w.diff_weights_desc(), ws);
    } else {
      const auto alg = dnnl::algorithm::convolution_direct;
      const dnnl::convolution_forward::primitive_desc fwd(
          {dnnl::prop_kind::forward_training, alg, src_md, wei_md, bias, dst_md, strides, pad,
           pad_r},
          _engine);
      const dnnl::convolution_backward_data::primitive_desc bwd_d(
          {alg, src_md, wei_md, dst_md, strides, pad, pad_r}, _engine, fwd);
      const dnnl::convolution_backward_weights::primitive_desc bwd_w(
          {alg, src_md, wei_md, bias, dst_md, strides, pad, pad_r}, _engine, fwd);
      assemble(conv, c, dnnl::convolution_forward(fwd), fwd.src_desc(), fwd.weights_desc(),
               fwd.dst_desc(), dnnl::convolution_backward_data(bwd_d), bwd_d.diff_src_desc(),
               bwd_d.diff_dst_desc(), bwd_d.weights_desc(),
               dnnl::convolution_backward_weights(bwd_w), bwd_w.src_desc(), bwd_w.diff_dst_desc(),
               bwd_w.diff_weights_desc(), ws);
    }
    return conv;
  }

  // The buffers of the three passes, shared where the layouts agree (see the file comment).
  void assemble(Conv& conv, const IdealConv& c, dnnl::primitive fwd, const memory::desc& src,
                const memory::desc& wei, const memory::desc& dst, dnnl::primitive bwd_d,
                const memory::desc& d_diff_src, const memory::desc& d_diff_dst,
                const memory::desc& d_wei, dnnl::primitive bwd_w, const memory::desc& w_src,
                const memory::desc& w_diff_dst, const memory::desc& w_diff_wei, float ws) {
    const memory x = filled(src, 1.0f), w = filled(wei, ws), y = filled(dst, 1.0f);
    auto reuse = [&](const memory& m, const memory::desc& md, float scale) {
      return m.get_desc() == md ? m : filled(md, scale);
    };
    Primitive& f = conv.pass[Forward];
    f.run = true;
    f.primitive = fwd;
    f.args = {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}};
    if (c.bias) f.args[DNNL_ARG_BIAS] = filled({{c.out_channels}, dt::f32, tag::x}, ws);
    Primitive& d = conv.pass[BackwardData];
    d.run = c.data_gradient;
    d.primitive = bwd_d;
    d.args = {{DNNL_ARG_DIFF_DST, reuse(y, d_diff_dst, 1.0f)},
              {DNNL_ARG_WEIGHTS, reuse(w, d_wei, ws)}};
    if (d.run) d.args[DNNL_ARG_DIFF_SRC] = filled(d_diff_src, 1.0f);
    Primitive& g = conv.pass[BackwardWeights];
    g.run = true;
    g.primitive = bwd_w;
    g.args = {{DNNL_ARG_SRC, reuse(x, w_src, 1.0f)},
              {DNNL_ARG_DIFF_DST, reuse(y, w_diff_dst, 1.0f)},
              {DNNL_ARG_DIFF_WEIGHTS, filled(w_diff_wei, ws)}};
    if (c.bias) g.args[DNNL_ARG_DIFF_BIAS] = filled({{c.out_channels}, dt::f32, tag::x}, ws);
  }

  dnnl::engine _engine;
  dnnl::stream _stream;
  std::vector<Conv> _convs;
};

}  // namespace halo3d::bench
