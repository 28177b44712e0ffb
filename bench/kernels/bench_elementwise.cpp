// Element-wise kernels, fp32, on a (1, 32, 64^3) block and 8M-entry flat Views: copy, add, axpby,
// LeakyReLU forward and backward, dropout, channel concatenation, flat axpy. GB/s counts the
// compulsory traffic (each input read once, each output written once; axpby and axpy also read
// their output). Manual time, fenced on both sides.
#include <benchmark/benchmark.h>

#include <functional>
#include <string>

#include "halo3d/kernels/Activations.hpp"
#include "halo3d/kernels/Channels.hpp"
#include "halo3d/kernels/Dropout.hpp"
#include "halo3d/kernels/Elementwise.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using kernels::Tensor;
using kernels::Vector;

enum class Op { Copy, Add, Axpby, LeakyForward, LeakyBackward, Dropout, Concat, FlatAxpy };

struct Config {
  Op op;
  index_t channels, extent;
};

template <class View>
void fillPattern(const Exec& exec, const View& v, index_t salt) {
  Kokkos::parallel_for(
      "bench_fill",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(exec, 0, index_t(v.size())),
      KOKKOS_LAMBDA(index_t i) {
        v.data()[i] = float(((i + salt) * 7919) % 10007) * 1e-3f - 5.0f;
      });
}

void elementwise(benchmark::State& state, const Config& cfg) {
  const Exec exec;
  const index_t c = cfg.channels, e = cfg.extent;
  const TensorBlock block = TensorBlock::whole({1, c, e, e, e});
  const TensorBlock wide = TensorBlock::whole({1, 2 * c, e, e, e});
  const Box box = block.owned();
  Tensor<float, Exec> a("a", block), b("b", block), y("y", block), cat("cat", wide);
  const index_t flat = index_t(a.view().size());
  Vector<float, Exec> fx("fx", flat), fy("fy", flat);
  fillPattern(exec, a.view(), 1);
  fillPattern(exec, b.view(), 2);
  fillPattern(exec, fx, 3);
  const kernels::RandomStream stream{1234, 1, 0};
  std::function<void()> run;
  double tensors = 2;
  switch (cfg.op) {
    case Op::Copy:
      run = [&] { kernels::copy(exec, a, y, box); };
      break;
    case Op::Add:
      run = [&] { kernels::add(exec, a, b, y, box); };
      tensors = 3;
      break;
    case Op::Axpby:
      run = [&] { kernels::axpby(exec, 0.5f, a, 0.9f, y, box); };
      tensors = 3;
      break;
    case Op::LeakyForward:
      run = [&] { kernels::leakyReluForward(exec, a, 0.01, y, box); };
      break;
    case Op::LeakyBackward:
      run = [&] { kernels::leakyReluBackward(exec, a, b, 0.01, y, box); };
      tensors = 3;
      break;
    case Op::Dropout:
      run = [&] { kernels::dropoutForward(exec, a, 0.5, stream, y, box); };
      break;
    case Op::Concat:
      run = [&] { kernels::concatChannels(exec, a, b, cat, wide.owned()); };
      tensors = 4;
      break;
    case Op::FlatAxpy:
      run = [&] { kernels::axpy(exec, 0.5f, fx, fy); };
      tensors = 3;
      break;
  }
  const double seconds = timeFenced(state, exec, run);
  const double bytes = tensors * double(flat) * sizeof(float);
  setBandwidth(state, bytes, seconds);
}

void registerAll() {
  const std::pair<Op, const char*> ops[] = {{Op::Copy, "copy"},
                                            {Op::Add, "add"},
                                            {Op::Axpby, "axpby"},
                                            {Op::LeakyForward, "leaky_relu_fwd"},
                                            {Op::LeakyBackward, "leaky_relu_bwd"},
                                            {Op::Dropout, "dropout"},
                                            {Op::Concat, "concat_channels"},
                                            {Op::FlatAxpy, "flat_axpy"}};
  for (const auto& [op, name] : ops) {
    const std::string prefix = std::string(name) + "/";
    benchmark::RegisterBenchmark((prefix + "C32_D64").c_str(), elementwise, Config{op, 32, 64})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((prefix + "smoke").c_str(), elementwise, Config{op, 2, 5})
        ->UseManualTime();
  }
}

const bool registered = (registerAll(), true);

}  // namespace
}  // namespace halo3d::bench
