#pragma once
// The ideal step as an anchor measured in the step benchmark's own run (issue 12): oneDNN's time
// for every convolution pass of the model (support/OneDnnConvolutions.hpp), timed once per
// benchmark iteration right after halo3d's step, plus the step's compulsory memory traffic
// (support/IdealStep.hpp has the counting rule) over the STREAM-copy bandwidth measured at set-up
// with the same threads. Counters: ideal_s (the slowest rank's), ideal_conv_s, ideal_memory_s,
// stream_GBps and step_over_ideal; and ideal_best_s / step_over_ideal_best, where each convolution
// pass counts at the faster of oneDNN and halo3d (bestConvSeconds). Built without oneDNN
// (HALO3D_BENCH_ONEDNN unset: not found, or a CUDA build, where a host oneDNN is no anchor for
// device kernels), it measures nothing, reports no ideal counters and says so in the label.
//
// HALO3D_BENCH_IDEAL_LAYERS=1: rank 0 prints, per layer and pass, halo3d's time (compute + halo
// wait + redistribution, from nn::LayerTimers) beside the ideal's, then the loss, the optimizer,
// the allreduce and what no layer timer covers (the gradient sums of tensors with several
// consumers run inside Model::backward, between the layers).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "support/IdealStep.hpp"
#include "support/MpiTiming.hpp"
#include "support/StreamBandwidth.hpp"
#if defined(HALO3D_BENCH_ONEDNN)
#include "support/OneDnnConvolutions.hpp"
#endif

namespace halo3d::bench {

// One step's pieces, timed apart for the breakdown: forward and backward on their own layer timers,
// the loss and the optimizer update on their own clocks. Accumulated until reset().
struct StepPieces {
  nn::LayerTimers forward, backward;
  double loss_s = 0, optimizer_s = 0;
  void reset() {
    forward.reset();
    backward.reset();
    loss_s = optimizer_s = 0;
  }
};

// Seconds that f() takes (host execution: the Kokkos kernels it launches have finished).
template <class F>
double secondsOf(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class IdealStepAnchor {
 public:
#if defined(HALO3D_BENCH_ONEDNN)
  static constexpr bool kAvailable = true;
#else
  static constexpr bool kAvailable = false;
#endif

  // `model` built, `loss_bytes`: the loss's compulsory bytes on this rank.
  IdealStepAnchor(const nn::Model& model, const GridCoords& coords, nn::Optimizer& optimizer,
                  double loss_bytes)
      : _model(model), _work(idealStepWork(model, coords, optimizer, loss_bytes)) {
    _conv_s.assign(_work.convs.size(), {0, 0, 0});
#if defined(HALO3D_BENCH_ONEDNN)
    _onednn = std::make_unique<OneDnnConvolutions>(_work.convs);
    _bandwidth = streamCopyBytesPerSecond();
#endif
  }

  // Times every convolution pass once (call once per benchmark iteration, after halo3d's step).
  void measure() {
#if defined(HALO3D_BENCH_ONEDNN)
    for (std::size_t i = 0; i < _conv_s.size(); ++i) {
      const std::array<double, 3> t = _onednn->time(i);
      for (int p = 0; p < 3; ++p)
        _conv_s[i][std::size_t(p)] += t[std::size_t(p)];
    }
    ++_runs;
#endif
  }

  // Sets the counters from `step_s` (the slowest rank's mean step) and what measure() saw, and the
  // label (`label`, plus a note when there is no ideal); prints the breakdown when asked.
  // Collective.
  void report(benchmark::State& state, double step_s, const StepPieces& pieces, double steps,
              const std::string& label) const {
    state.SetLabel(kAvailable ? label : label + " (no ideal: built without oneDNN)");
    if (!kAvailable || _runs == 0) return;
    state.counters["stream_GBps"] = 1e-9 * _bandwidth;
    state.counters["ideal_memory_s"] = maxOverRanks(memorySeconds());
    const double conv = convSeconds(), ideal = maxOverRanks(conv + memorySeconds());
    state.counters["ideal_conv_s"] = maxOverRanks(conv);
    state.counters["ideal_s"] = ideal;
    state.counters["step_s"] = step_s;
    state.counters["step_over_ideal"] = step_s / ideal;
    const double best = maxOverRanks(bestConvSeconds(pieces, steps) + memorySeconds());
    state.counters["ideal_best_s"] = best;
    state.counters["step_over_ideal_best"] = step_s / best;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && std::getenv("HALO3D_BENCH_IDEAL_LAYERS"))
      printBreakdown(pieces, steps, step_s);
  }

  double memorySeconds() const {
    return _bandwidth > 0 ? _work.memoryBytes() / _bandwidth : 0.0;
  }
  // The convolutions at the faster of oneDNN and halo3d's own layer, per layer and pass (forward;
  // backward data + filter together, as the layer timers see them): where oneDNN is the slower one
  // (few channels), the ideal above is no limit, and this one is the tighter anchor.
  double bestConvSeconds(const StepPieces& pieces, double steps) const {
    double s = 0;
    for (std::size_t i = 0; i < _conv_s.size(); ++i) {
      const std::string& name = _work.convs[i].layer;
      const auto& t = _conv_s[i];
      s += std::min(layerSeconds(pieces.forward, name) / steps, t[0] / double(_runs)) +
           std::min(layerSeconds(pieces.backward, name) / steps, (t[1] + t[2]) / double(_runs));
    }
    return s;
  }
  // oneDNN's mean seconds per step over every convolution pass.
  double convSeconds() const {
    double s = 0;
    for (const auto& t : _conv_s)
      s += t[0] + t[1] + t[2];
    return _runs ? s / double(_runs) : 0.0;
  }

 private:
  static double layerSeconds(const nn::LayerTimers& t, const std::string& name) {
    return t.get(name, nn::Phase::Compute) + t.get(name, nn::Phase::HaloWait) +
           t.get(name, nn::Phase::Redistribute);
  }

  void printBreakdown(const StepPieces& pieces, double steps, double step_s) const {
    const double runs = double(_runs), ms = 1e3;
    std::fprintf(stderr,
                 "ideal step breakdown (ms per step; halo3d: compute + halo wait + "
                 "redistribution; ideal: oneDNN, or bytes / %.1f GB/s)\n"
                 "%-24s %-9s %9s %9s %9s %9s %7s\n",
                 1e-9 * _bandwidth, "layer", "kind", "h3d fwd", "ideal fwd", "h3d bwd", "ideal bwd",
                 "ratio");
    double timed = 0;
    auto row = [&](const std::string& name, const std::string& kind, double hf, double idf,
                   double hb, double idb) {
      timed += hf + hb;
      std::fprintf(stderr, "%-24s %-9s %9.3f %9.3f %9.3f %9.3f %7.2f\n", name.c_str(),
                   kind.substr(0, 9).c_str(), ms * hf, ms * idf, ms * hb, ms * idb,
                   (idf + idb) > 0 ? (hf + hb) / (idf + idb) : 0.0);
    };
    std::size_t ci = 0, ti = 0;
    const nn::ModelPlan& plan = _model.builtPlan();
    for (int id : plan.order()) {
      const nn::PlanNode& n = plan.node(id);
      if (!n.layer) {
        if (n.replicates >= 0)
          row(n.name, "Replicate", layerSeconds(pieces.forward, n.name) / steps, 0,
              layerSeconds(pieces.backward, n.name) / steps, 0);
        continue;
      }
      const double hf = layerSeconds(pieces.forward, n.name) / steps,
                   hb = layerSeconds(pieces.backward, n.name) / steps;
      if (ci < _work.convs.size() && _work.convs[ci].layer == n.name) {
        const auto& t = _conv_s[ci++];
        row(n.name, n.kind.substr(0, n.kind.find('(')), hf, t[0] / runs, hb, (t[1] + t[2]) / runs);
      } else {
        const IdealTraffic& t = _work.traffic.at(ti++);
        row(n.name, n.kind.substr(0, n.kind.find('(')), hf, t.forward_bytes / _bandwidth, hb,
            t.backward_bytes / _bandwidth);
      }
      if (ti < _work.traffic.size() && _work.traffic[ti].what == n.name + " gradient sum") {
        const IdealTraffic& t = _work.traffic[ti++];
        row(t.what, "Sum", 0, 0, 0, t.backward_bytes / _bandwidth);  // halo3d's: untimed
      }
    }
    const IdealTraffic& loss = _work.traffic.at(ti++);
    const IdealTraffic& opt = _work.traffic.at(ti++);
    row("loss", "Loss", 0, 0, pieces.loss_s / steps, loss.backward_bytes / _bandwidth);
    row("optimizer", "Optimizer", 0, 0, pieces.optimizer_s / steps,
        opt.backward_bytes / _bandwidth);
    const double allreduce = pieces.backward.get("allreduce", nn::Phase::Allreduce) / steps;
    row("allreduce", "Allreduce", 0, 0, allreduce, 0);
    std::fprintf(stderr, "%-24s %-9s %9s %9s %9.3f %9s\n", "untimed (rest of step)", "", "", "",
                 ms * (step_s - timed), "");
    std::fprintf(stderr, "%-24s %-9s %9s %9s %9.3f %9.3f %7.2f   (conv %.3f, memory %.3f)\n",
                 "step", "", "", "", ms * step_s, ms * (convSeconds() + memorySeconds()),
                 step_s / (convSeconds() + memorySeconds()), ms * convSeconds(),
                 ms * memorySeconds());
  }

  const nn::Model& _model;
  IdealStepWork _work;
#if defined(HALO3D_BENCH_ONEDNN)
  std::unique_ptr<OneDnnConvolutions> _onednn;
#endif
  std::vector<std::array<double, 3>> _conv_s;  // summed over measure() calls
  int _runs = 0;
  double _bandwidth = 0;
};

}  // namespace halo3d::bench
