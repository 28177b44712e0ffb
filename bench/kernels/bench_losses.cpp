// Losses, fp32: softmax cross-entropy and soft Dice (partial sums and backward) on (1, C, 64^3)
// logits with int32 labels, MSE partial sums on a (1, 32, 64^3) tensor and on a flat 8M-entry View.
// GB/s counts the compulsory traffic: sums read the logits (or pred and target) and the labels;
// backward also writes the gradient. Manual time, fenced on both sides.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>

#include "halo3d/kernels/Losses.hpp"
#include "support/ManualTime.hpp"

namespace halo3d::bench {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using kernels::Tensor;
using kernels::Vector;

enum class Loss {
  CrossEntropySums,
  CrossEntropyBackward,
  DiceSums,
  DiceBackward,
  MseSums,
  FlatMseSums
};

struct Config {
  Loss loss;
  index_t classes, extent;
};

void losses(benchmark::State& state, const Config& cfg) {
  const Exec exec;
  const index_t c = cfg.classes, e = cfg.extent;
  const TensorBlock block = TensorBlock::whole({1, c, e, e, e});
  const Box box = block.owned();
  Tensor<float, Exec> logits("logits", block), target("target", block), grad("grad", block);
  Tensor<std::int32_t, Exec> labels("labels", TensorBlock::whole({1, 1, e, e, e}));
  const auto xv = logits.view(), tv = target.view();
  const auto lv = labels.view();
  Kokkos::parallel_for(
      "bench_fill",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(exec, 0, index_t(xv.size())),
      KOKKOS_LAMBDA(index_t i) {
        xv.data()[i] = float((i * 7919) % 10007) * 1e-3f - 5.0f;
        tv.data()[i] = float((i * 104729) % 10007) * 1e-3f - 5.0f;
        if (i < index_t(lv.size())) lv.data()[i] = std::int32_t((i * 31) % c);
      });
  const index_t flat = index_t(xv.size());
  const Vector<float, Exec> pred(xv.data(), flat), flat_target(tv.data(), flat);
  Vector<double, Exec> sums("sums", kernels::softDiceSumsSize(c));
  Vector<double, Exec> ce_sums("ce_sums", kernels::kCrossEntropySumsSize);
  Vector<double, Exec> mse_sums("mse_sums", kernels::kMseSumsSize);
  kernels::softDiceSums(exec, logits, labels, sums, box);
  const double voxels = double(box.size());
  const double label_bytes = double(lv.size()) * sizeof(std::int32_t);
  const double tensor_bytes = double(flat) * sizeof(float);
  std::function<void()> run;
  double bytes = tensor_bytes + label_bytes;
  switch (cfg.loss) {
    case Loss::CrossEntropySums:
      run = [&] { kernels::softmaxCrossEntropySums(exec, logits, labels, ce_sums, box); };
      break;
    case Loss::CrossEntropyBackward:
      run = [&] { kernels::softmaxCrossEntropyBackward(exec, logits, labels, voxels, grad, box); };
      bytes += tensor_bytes;
      break;
    case Loss::DiceSums:
      run = [&] { kernels::softDiceSums(exec, logits, labels, sums, box); };
      break;
    case Loss::DiceBackward:
      run = [&] { kernels::softDiceBackward(exec, logits, labels, sums, 1.0, grad, box); };
      bytes += tensor_bytes;
      break;
    case Loss::MseSums:
      run = [&] { kernels::mseLossSums(exec, logits, target, mse_sums, box); };
      bytes = 2 * tensor_bytes;
      break;
    case Loss::FlatMseSums:
      run = [&] { kernels::mseLossSums(exec, pred, flat_target, mse_sums); };
      bytes = 2 * tensor_bytes;
      break;
  }
  const double seconds = timeFenced(state, exec, run);
  setBandwidth(state, bytes, seconds);
}

void registerAll() {
  struct Entry {
    Loss loss;
    const char* name;
    index_t classes;
  };
  const Entry entries[] = {{Loss::CrossEntropySums, "cross_entropy_sums", 4},
                           {Loss::CrossEntropyBackward, "cross_entropy_bwd", 4},
                           {Loss::DiceSums, "dice_sums", 4},
                           {Loss::DiceBackward, "dice_bwd", 4},
                           {Loss::MseSums, "mse_sums", 32},
                           {Loss::FlatMseSums, "mse_sums_flat", 32}};
  for (const Entry& en : entries) {
    const std::string prefix = std::string(en.name) + "/";
    benchmark::RegisterBenchmark((prefix + "C" + std::to_string(en.classes) + "_D64").c_str(),
                                 losses, Config{en.loss, en.classes, 64})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((prefix + "smoke").c_str(), losses, Config{en.loss, 3, 5})
        ->UseManualTime();
  }
}

const bool registered = (registerAll(), true);

}  // namespace
}  // namespace halo3d::bench
