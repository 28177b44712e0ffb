#pragma once
// Per-layer phase timers for benchmarks, metrics and sweeps: compute, halo wait, redistribution,
// allreduce wait and I/O, in seconds, and the halo traffic (bytes and MPI messages this rank
// sends), accumulated until reset(). Times are wall clock on this rank around fenced regions, and
// exclusive: a timer opened inside another (BatchNorm's statistics allreduce inside its compute)
// takes its time out of the enclosing one, so the phases of a step add up to at most its wall time.
// One thread (the one that runs the model) uses a LayerTimers.

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "halo3d/core/Activity.hpp"
#include "halo3d/core/EnumNames.hpp"

namespace halo3d::nn {

enum class Phase { Compute, HaloWait, Allreduce, Io, Redistribute };
inline constexpr int kPhases = 5;

// What a layer's halo exchanges sent from this rank.
struct HaloTraffic {
  double bytes = 0, messages = 0;
};

class ScopedTimer;

class LayerTimers {
 public:
  void add(const std::string& layer, Phase phase, double seconds) {
    _t[layer][int(phase)] += seconds;
  }
  void addTraffic(const std::string& layer, double bytes, double messages) {
    HaloTraffic& t = _traffic[layer];
    t.bytes += bytes;
    t.messages += messages;
  }
  double total(Phase phase) const {
    double s = 0;
    for (const auto& [name, t] : _t)
      s += t[int(phase)];
    return s;
  }
  double get(const std::string& layer, Phase phase) const {
    auto it = _t.find(layer);
    return it == _t.end() ? 0.0 : it->second[int(phase)];
  }
  const std::map<std::string, std::array<double, kPhases>>& all() const { return _t; }
  const std::map<std::string, HaloTraffic>& traffic() const { return _traffic; }
  HaloTraffic totalTraffic() const {
    HaloTraffic sum;
    for (const auto& [name, t] : _traffic) {
      sum.bytes += t.bytes;
      sum.messages += t.messages;
    }
    return sum;
  }
  void reset() {
    _t.clear();
    _traffic.clear();
  }

 private:
  friend class ScopedTimer;
  std::map<std::string, std::array<double, kPhases>> _t;
  std::map<std::string, HaloTraffic> _traffic;
  ScopedTimer* _open = nullptr;  // the innermost ScopedTimer still running
};

inline constexpr EnumName<Phase> kPhaseNames[] = {{Phase::Compute, "compute"},
                                                  {Phase::HaloWait, "halo wait"},
                                                  {Phase::Allreduce, "allreduce"},
                                                  {Phase::Io, "I/O"},
                                                  {Phase::Redistribute, "redistribution"}};

inline const char* phaseName(Phase phase) {
  return nameOf(kPhaseNames, phase);
}

// Adds the lifetime of the scope to `timers` (if any) under (layer, phase), less the lifetimes of
// the timers opened inside it on the same `timers`. The name is kept by value: callers pass
// temporaries ("allreduce"), which a reference would outlive. A communication phase is also an
// activity (core/Activity.hpp) appended to the current one, "features.3 forward: halo wait", so a
// stalled rank names where it waits, and a Kokkos profiling region.
class ScopedTimer {
 public:
  ScopedTimer(LayerTimers* timers, std::string layer, Phase phase)
      : _timers(timers),
        _layer(std::move(layer)),
        _phase(phase),
        _start(std::chrono::steady_clock::now()) {
    if (phase != Phase::Compute)
      _activity.emplace(currentActivity().what + ": " + phaseName(phase));
    if (_timers) {
      _enclosing = _timers->_open;
      _timers->_open = this;
    }
  }
  ~ScopedTimer() {
    if (!_timers) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - _start).count();
    _timers->add(_layer, _phase, seconds - _inner);
    if (_enclosing) _enclosing->_inner += seconds;
    _timers->_open = _enclosing;
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  LayerTimers* _timers;
  std::string _layer;
  Phase _phase;
  std::chrono::steady_clock::time_point _start;
  ScopedTimer* _enclosing = nullptr;
  double _inner = 0;  // seconds of the timers opened inside this one
  std::optional<ScopedActivity> _activity;
};

}  // namespace halo3d::nn
