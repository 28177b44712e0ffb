#include "halo3d/nn/plan/StepModel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "halo3d/comm/impl/HaloPlan.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Layer.hpp"
#include "halo3d/nn/layers/Boxes.hpp"
#include "halo3d/nn/layers/WindowLayer.hpp"
#include "halo3d/nn/plan/Calibration.hpp"

namespace halo3d::nn {

namespace {

Shape5 ownedShape(const TensorBlock& b) {
  return {b.localSamples(), b.channels(), b.owned().extent(0), b.owned().extent(1),
          b.owned().extent(2)};
}

std::size_t allocationBytes(const TensorBlock& b, std::size_t element_bytes) {
  const Shape5 e = b.allocationExtents();
  return element_bytes * std::size_t(e[0] * e[1] * e[2] * e[3] * e[4]);
}

// One prediction, at one point of a roofline machine's efficiency band (0: low, 1: high).
class Predictor {
 public:
  Predictor(const ModelPlan& plan, const Machine& m, const RunShape& run, double efficiency,
            std::vector<std::string>& notes)
      : _plan(plan), _m(m), _run(run), _eff(efficiency), _notes(notes) {
    const GridShape& g = plan.grid();
    const int slots = m.devices_per_node > 0 ? m.devices_per_node
                                             : std::max(1, m.cores_per_node / run.threads_per_rank);
    _ranks_per_node = std::min(g.size(), run.ranks_per_node > 0 ? run.ranks_per_node : slots);
    _stretch = coreShare(m, _ranks_per_node, run.threads_per_rank);
  }

  StepPrediction run() {
    StepPrediction p;
    const std::vector<GridCoords> reps = _plan.representativeRanks();
    std::vector<std::array<int, 2>> groups;  // per layer: ranks meeting forward, backward
    for (int id : _plan.order()) {
      const PlanNode& n = _plan.node(id);
      if (id == 0) continue;
      groups.push_back(syncGroups(id));
      LayerPrediction worst;
      double worst_total = -1;
      for (const GridCoords& c : reps) {
        const LayerPrediction l = layer(id, c);
        const double total =
            l.forward_s + l.backward_s + l.halo_s + l.redistribute_s + l.allreduce_s;
        if (total > worst_total) {
          worst_total = total;
          worst = l;
        }
      }
      worst.name = n.name;
      p.compute_s += worst.forward_s + worst.backward_s;
      p.halo_s += worst.halo_s;
      p.redistribute_s += worst.redistribute_s;
      p.allreduce_s += worst.allreduce_s;
      p.layers.push_back(worst);
    }
    // The loss (two small allreduces), the step-end agreement and the optimizer.
    const double small = std::ceil(std::log2(double(_plan.grid().size()))) * worldLink().alpha_s;
    p.allreduce_s += 3 * small + gradientAllreduce();
    p.compute_s += optimizerStep();
    p.input_s = inputStore();
    p.loss_s = loss();
    p.compute_s += p.input_s + p.loss_s;
    // The batch read, hidden by prefetch up to the step's compute, if a core is free for the
    // loader's thread. A host rank whose threads fill the node's cores reads on its own core: the
    // read (CPU-bound from the page cache) then takes its time from the step, prefetch or not.
    const double read = readSeconds();
    const bool idle_core =
        _m.devices_per_node > 0 || _ranks_per_node * _run.threads_per_rank < _m.cores_per_node;
    // A prefetching loader's thread without a core of its own is one more runnable thread on the
    // ranks' cores for the read's share of the step.
    const double work = p.compute_s + p.halo_s + p.redistribute_s + p.allreduce_s;
    const double loader = _run.prefetch && !idle_core && work > 0 ? std::min(1.0, read / work) : 0;
    p.timeshare_s = timeshare(p.layers, groups, loader, p.input_s, p.loss_s);
    p.timeshare_s += pacing(p);
    const double busy = work + p.timeshare_s;
    p.io_s = _run.prefetch && idle_core ? std::max(0.0, read - busy) : read;
    p.step_s = busy + p.io_s;
    memory(p);
    return p;
  }

 private:
  const Link& linkBetween(int rank_a, int rank_b) const {
    return rank_a / _ranks_per_node == rank_b / _ranks_per_node ? _m.shared_memory : _m.network;
  }
  // The link of a collective over `ranks` consecutive ranks.
  const Link& groupLink(int ranks) const {
    return ranks <= _ranks_per_node ? _m.shared_memory : _m.network;
  }
  const Link& worldLink() const { return groupLink(_plan.grid().size()); }

  // Compute seconds of node `id` on the rank at `c`: the calibrated time of its blocks, scaled from
  // the nearest calibrated block of the same layer when that one was not timed, or the roofline.
  std::array<double, 2> compute(int id, const GridCoords& c) const {
    const PlanNode& n = _plan.node(id);
    std::vector<Shape5> inputs;
    for (int i : n.inputs)
      inputs.push_back(ownedShape(_plan.block(i, c)));
    const Shape5 output = ownedShape(_plan.block(id, c));
    const bool input_gradient = n.inputs.at(0) != 0;
    const LayerWork w = n.layer->work(inputs, output, _run.element_bytes, input_gradient);
    if (!_m.calibrated) {
      const RooflineCompute& r = *_m.roofline;
      const auto at = [&](const std::array<double, 2>& band) {
        return band[0] + _eff * (band[1] - band[0]);
      };
      const bool conv = w.flops_forward > 8 * w.bytes_forward;  // arithmetic-bound
      const auto seconds = [&](double flops, double bytes) {
        return r.launch_s + (conv ? flops / (r.peak_flops * at(r.conv_efficiency))
                                  : bytes / (r.memory_bytes_per_s * at(r.memory_efficiency)));
      };
      return {seconds(w.flops_forward, w.bytes_forward),
              seconds(w.flops_backward, w.bytes_backward)};
    }
    const LayerTiming key = timingKey(_plan, id, c, _run.threads_per_rank);
    if (const LayerTiming* t = _m.find(key))
      return {t->forward_s * _stretch, t->backward_s * _stretch};
    // Not timed in these pieces: the same block timed whole (a file calibrated before the
    // neighbours key), as it is; else the same layer on the nearest block run in the same pieces,
    // or on the nearest block at all, scaled by the work.
    const LayerTiming* best = nullptr;
    if (key.neighbours != std::array<int, 3>{0, 0, 0})
      best = _m.find(key.layer, key.input, key.output, key.threads);
    for (int pass = 0; pass < 2 && !best; ++pass) {
      double best_distance = std::numeric_limits<double>::max();
      for (const LayerTiming& t : _m.layers)
        if (t.layer == key.layer && t.threads == key.threads &&
            (pass == 1 || t.neighbours == key.neighbours)) {
          const double d = std::abs(std::log(cellsOf(t.output) / cellsOf(output)));
          if (d < best_distance) {
            best_distance = d;
            best = &t;
          }
        }
    }
    require<InputError>(
        best != nullptr, "machine file '", _m.path, "' has no timing of layer ", n.kind, " with ",
        key.threads, " threads: calibrate this model on this machine (halo3d-sweep --calibrate)");
    const LayerWork ref =
        n.layer->work({best->input}, best->output, _run.element_bytes, input_gradient);
    _notes.push_back(concat(n.name, " on ", key.input, " scaled from the timing on ", best->input,
                            best->neighbours == key.neighbours
                                ? ""
                                : " (run in other overlap pieces: other neighbours)"));
    const auto scale = [](double a, double b) { return b > 0 ? a / b : 1.0; };
    const double f =
        scale(w.flops_forward + w.bytes_forward, ref.flops_forward + ref.bytes_forward);
    const double b =
        scale(w.flops_backward + w.bytes_backward, ref.flops_backward + ref.bytes_backward);
    return {best->forward_s * f * _stretch, best->backward_s * b * _stretch};
  }

  // Seconds of one exchange round of `plan` from the rank at `c`, and its traffic.
  double exchange(const impl::HaloPlan& hp, const GridCoords& c, bool gather, double& bytes,
                  double& messages) const {
    impl::DirectRule rule;
    rule.enabled = _m.devices_per_node == 0;  // GPU buffers are staged through host memory
    const GridShape& g = _plan.grid();
    const int me = g.rankOf(c);
    double t = 0;
    for (const impl::WireMessage& w : impl::wireMessages(hp, gather, rule, _run.element_bytes)) {
      GridCoords peer = c;
      peer.d += w.offset[0];
      peer.h += w.offset[1];
      peer.w += w.offset[2];
      const Link& l = linkBetween(me, g.rankOf(peer));
      t += l.time(double(w.bytes), double(w.messages)) * (&l == &_m.shared_memory ? _stretch : 1.0);
      bytes += double(w.bytes);
      messages += double(w.messages);
    }
    return t;
  }

  LayerPrediction layer(int id, const GridCoords& c) const {
    const PlanNode& n = _plan.node(id);
    const GridShape& g = _plan.grid();
    LayerPrediction l;
    if (!n.layer) {  // a replication: ring allgather over the spatial group, and the copies
      const TensorBlock whole = _plan.block(id, c);
      const double total = double(allocationBytes(whole, _run.element_bytes));
      const int s = g.spatialSize();
      const Link& link = groupLink(s);
      l.redistribute_s = (s - 1) * (link.alpha_s + total / s * link.beta_s_per_byte) +
                         2 * total * _m.shared_memory.beta_s_per_byte * _stretch;
      return l;
    }
    const auto t = compute(id, c);
    l.forward_s = t[0];
    l.backward_s = t[1];
    const int in = n.inputs.at(0);
    const auto* window = dynamic_cast<const WindowLayer*>(n.layer);
    if (window && _plan.node(in).spec.dist == Distribution::Spatial && g.spatialSize() > 1) {
      const TensorBlock xb = _plan.block(in, c);
      const impl::HaloPlan hp = impl::planHaloExchange(xb, g, c.spatial());
      const double gather = exchange(hp, c, true, l.halo_bytes, l.halo_messages);
      // Backward scatters dx's ghosts; the data has no gradient.
      const double scatter = in == 0 ? 0.0 : exchange(hp, c, false, l.halo_bytes, l.halo_messages);
      if (_run.overlap) {
        // Forward hides the gather behind the interior outputs, backward the scatter behind the
        // owned input cells (about half its work: the other half is the weight gradient).
        const Box out = _plan.block(id, c).owned();
        const Box interior = narrowAlongW(
            out, window->interiorOutputs(validWithoutExchange(xb), out), kRowVectorCells);
        const double hidden_f = l.forward_s * double(interior.size()) / double(out.size());
        l.halo_s = std::max(0.0, gather - hidden_f) + std::max(0.0, scatter - 0.5 * l.backward_s);
      } else {
        l.halo_s = gather + scatter;
      }
    }
    if (n.kind.rfind("BatchNorm3d(", 0) == 0) {
      // Statistics (2C+1 doubles) forward, twice with several sample groups (running statistics),
      // and 2C doubles backward: recursive doubling over the group.
      const int group = n.kind.find("global") != std::string::npos ? g.size() : g.spatialSize();
      const double c2 = double(2 * n.spec.shape[1] + 1) * 8;
      const Link& link = groupLink(group);
      const double rounds = std::ceil(std::log2(double(group)));
      const double rounds_data = std::ceil(std::log2(double(g.n())));
      l.allreduce_s = (2 * rounds + rounds_data) * link.time(c2, 1);
    }
    return l;
  }

  // How many ranks meet at node `id`'s synchronisation, forward and backward (0: none): a halo
  // exchange (gather forward; the scatter backward unless the input is the data) and a
  // replication's allgather (forward only) over the spatial group, BatchNorm's statistics
  // (forward and backward) over its group.
  std::array<int, 2> syncGroups(int id) const {
    const PlanNode& n = _plan.node(id);
    const GridShape& g = _plan.grid();
    const int s = g.spatialSize();
    if (!n.layer) return {s > 1 ? s : 0, 0};
    const int in = n.inputs.at(0);
    if (dynamic_cast<const WindowLayer*>(n.layer) &&
        _plan.node(in).spec.dist == Distribution::Spatial && s > 1)
      return {s, in == 0 ? 0 : s};
    if (n.kind.rfind("BatchNorm3d(", 0) == 0) {
      const int group = n.kind.find("global") != std::string::npos ? g.size() : s;
      if (group > 1) return {group, group};
    }
    return {0, 0};
  }

  // Ranks that time-share cores (s = runnable threads per core > 1: the ranks' threads, and each
  // rank's loader thread for the `loader` share of the step it reads) reach each synchronisation
  // at different times: over D seconds of (stretched) compute a rank gets the core in slices of q,
  // and its share drifts like a random walk of D / q slices. A scheduler that gives each slice to a
  // random runnable rank makes sigma = sqrt(D q (s - 1)); one that runs the most lagging rank
  // first, sqrt(D q (s - 1)) / s. The model takes the second: a rank that waits yields its core
  // (Open MPI yields when oversubscribed), so the rank behind it runs. (Until the layers were
  // calibrated in a step's order the compute was priced low, and the geometric middle of the two,
  // sqrt(D q (s - 1) / s), made up for it; docs/scaling.md, "The first opens, and the layers timed
  // in step order".) A stretch shorter than one slice is one step of that walk, and a step cannot
  // be longer than the stretch itself: sigma = sqrt(D min(D, q) (s - 1)) / s, so that many short
  // stretches (a small model's layers, each ending in an exchange) do not add up to more lateness
  // than one slice each could give. The k ranks that meet wait for the latest, E[max of k normals]
  // sigma. The forward pass runs the layers in order, then the loss (no meeting of its own: its
  // allreduces are priced as alpha terms), the backward pass in reverse; the last stretch ends at
  // the gradient allreduce and the step's allreduces, where every rank meets. The lateness is
  // booked on the layer whose synchronisation waits for it.
  double timeshare(std::vector<LayerPrediction>& layers,
                   const std::vector<std::array<int, 2>>& groups, double loader, double input_store,
                   double loss) const {
    const double q = _m.scheduler_slice_s;
    const double s = _ranks_per_node * (_run.threads_per_rank + loader) / double(_m.cores_per_node);
    if (_m.devices_per_node > 0 || q <= 0 || s <= 1) return 0;
    const auto late = [&](double d, int k) {
      if (k <= 1) return 0.0;
      auto z = _max_of_normals.find(k);
      if (z == _max_of_normals.end()) z = _max_of_normals.emplace(k, expectedMaxOfNormals(k)).first;
      return z->second * std::sqrt(d * std::min(d, q) * (s - 1)) / s;
    };
    // The batch is stored into the input after the previous step's last synchronisation.
    double total = 0, since = input_store;
    const auto meet = [&](LayerPrediction& l, int k) {
      if (k <= 1) return;
      const double t = late(since, k);
      l.timeshare_s += t;
      total += t;
      since = 0;
    };
    for (std::size_t i = 0; i < layers.size(); ++i) {
      since += layers[i].forward_s;
      meet(layers[i], groups[i][0]);
    }
    since += loss;
    for (std::size_t i = layers.size(); i-- > 0;) {
      since += layers[i].backward_s;
      meet(layers[i], groups[i][1]);
    }
    return total + late(since, _plan.grid().size());
  }

  // Ranks on separate host cores, one rank's threads per core at most: the calibration timed each
  // layer on one rank with the other cores idle, but here every core computes, each at its own
  // speed, and where the ranks meet the earlier waits for the later. Session 33 saw both parts on
  // this VM (the slower core of a pinned pair about 3% over the pair's mean, the meetings about 5%
  // more; docs/scaling.md), and no per-core probe run beside the sweeps predicted them, so the
  // model takes their sum as one measured fraction of the compute (Machine::core_pacing, measured
  // apart from sweeps by scripts/measure_core_pacing.py), booked on each layer by its compute and
  // on the step for the rest (input store, loss, optimizer). Ranks that time-share cores are priced
  // by timeshare() instead; devices do not share the host's cores.
  double pacing(StepPrediction& p) const {
    const double f = _m.core_pacing;
    if (f <= 0 || _m.devices_per_node > 0 || _plan.grid().size() < 2 ||
        _ranks_per_node * _run.threads_per_rank > _m.cores_per_node)
      return 0;
    for (LayerPrediction& l : p.layers)
      l.timeshare_s += f * (l.forward_s + l.backward_s);
    return f * p.compute_s;
  }

  // The gradient buckets: GradientReducer starts an MPI_Iallreduce per bucket into a separate
  // receive buffer, and Open MPI's libnbc (nbc_iallreduce.c) picks the algorithm: binomial reduce
  // and broadcast under 4 ranks or 64 KiB, else reduce-scatter + allgather (Rabenseifner) when the
  // bucket has at least as many elements as the largest power of two p2 <= P. Ranks beyond p2 first
  // hand their bucket to a partner and get the result back. Measured on this implementation,
  // backward does not hide it: MPI moves it only inside MPI calls.
  double gradientAllreduce() const {
    const int p = _plan.grid().size();
    if (p == 1) return 0;
    const double n = double(_run.trainable_parameters) * 4;  // fp32 gradients
    const double buckets = std::ceil(n / double(_run.bucket_bytes));
    // A bf16 wire moves half the bytes, in place: libnbc's binomial algorithm at every size. Its
    // reduction (a user operation converting through float) is priced at the calibrated rate of
    // the float sum, per byte.
    const bool bf16_wire = _run.gradient_wire_bytes == 2;
    const double b = n / buckets * (bf16_wire ? 0.5 : 1.0);
    const Link& link = worldLink();
    const double gamma = _m.reduction_gamma_s_per_byte * _stretch;
    int p2 = 1;
    while (p2 * 2 <= p)
      p2 *= 2;
    double t = 0;
    if (p < 4 || b < 65536 || bf16_wire) {
      t = std::ceil(std::log2(double(p))) * (2 * link.time(b, 1) + b * gamma);
    } else if (b / 4 >= p2) {
      const double frac = double(p2 - 1) / p2;
      t = 2 * std::log2(double(p2)) * link.alpha_s + 2 * frac * b * link.beta_s_per_byte +
          frac * b * gamma;
      if (p != p2) t += 2 * link.time(b, 1) + b * gamma;
    } else {
      const double frac = double(p - 1) / p;
      t = 2 * (p - 1) * link.alpha_s + 2 * frac * b * link.beta_s_per_byte + frac * b * gamma;
    }
    return buckets * t;
  }

  double optimizerStep() const {
    if (!_m.calibrated) {
      const RooflineCompute& r = *_m.roofline;
      const double eff =
          r.memory_efficiency[0] + _eff * (r.memory_efficiency[1] - r.memory_efficiency[0]);
      // Adam reads parameter, gradient and two moments and writes three of them.
      const double bytes = double(_run.trainable_parameters) * 4 * 7;
      return r.launch_s + bytes / (r.memory_bytes_per_s * eff);
    }
    for (const LayerTiming& t : _m.layers)
      if (t.layer.rfind("optimizer ", 0) == 0 && t.threads == _run.threads_per_rank) {
        const double scale =
            t.input[0] > 0 ? double(_run.trainable_parameters) / double(t.input[0]) : 1;
        return t.forward_s * scale * _stretch;
      }
    _notes.push_back("no optimizer timing in the machine file: the optimizer step is left out");
    return 0;
  }

  // Storing the largest rank's batch block into the model's input (what ModelCache::feed does).
  double inputStore() const {
    return stepPart(inputStoreKey(_plan, ModelPlan::largestRank(), _run.threads_per_rank),
                    "storing the batch into the input");
  }

  // The loss and its gradient on the largest rank's output block, between forward and backward.
  double loss() const {
    if (_run.loss.empty()) return 0;
    return stepPart(lossKey(_plan, ModelPlan::largestRank(), _run.loss, _run.threads_per_rank),
                    "the loss");
  }

  // A part of the step outside every layer, timed by the calibration under `key`: its time, or the
  // nearest timed block's scaled by the cells (both are a pass over the block). Left out on
  // roofline machines, where nothing measured it, and where the file has no timing of it.
  double stepPart(const LayerTiming& key, const char* what) const {
    if (!_m.calibrated) return 0;
    if (const LayerTiming* t = _m.find(key)) return t->forward_s * _stretch;
    const LayerTiming* best = nullptr;
    double best_distance = std::numeric_limits<double>::max();
    for (const LayerTiming& t : _m.layers)
      if (t.layer == key.layer && t.threads == key.threads) {
        const double d = std::abs(std::log(cellsOf(t.input) / cellsOf(key.input)));
        if (d < best_distance) {
          best_distance = d;
          best = &t;
        }
      }
    if (!best) {
      _notes.push_back(
          concat("no '", key.layer, "' timing in the machine file: ", what, " is left out"));
      return 0;
    }
    _notes.push_back(
        concat(key.layer, " on ", key.input, " scaled from the timing on ", best->input));
    return best->forward_s * cellsOf(key.input) / cellsOf(best->input) * _stretch;
  }

  // The batch read of the largest rank: the loader's calibrated time on this block of the run's
  // data (what it costs beyond the bytes: opening each sample's file, the conversion and the
  // transform, the rows of a W split, the agreement on failures), else the bytes at the read rate.
  double readSeconds() const {
    if (_m.calibrated && !_run.batch_read.empty()) {
      const LayerTiming key = batchReadKey(_plan, _run.batch_read, _run.threads_per_rank);
      if (const LayerTiming* t = _m.find(key)) return t->forward_s * _stretch;
      _notes.push_back(concat("no '", _run.batch_read, "' timing on ", key.input,
                              " in the machine file: the read priced at io.read_bytes_per_s"));
    }
    const double bytes = _run.read_bytes_per_rank > 0
                             ? _run.read_bytes_per_rank
                             : cellsOf(ownedShape(_plan.block(0, ModelPlan::largestRank()))) * 4;
    return bytes / _m.io_read_bytes_per_s * _stretch;
  }

  // The largest rank's memory: ranks differ in block sizes (the first part of a split owns the
  // most cells) and in halo buffers (a middle rank has neighbours on both sides), so every
  // representative rank is counted and the largest total kept.
  void memory(StepPrediction& p) const {
    std::size_t best = 0;
    for (const GridCoords& c : _plan.representativeRanks()) {
      std::vector<MemoryTerm> terms = memoryOf(c);
      std::size_t total = 0;
      for (const MemoryTerm& t : terms)
        total += t.bytes;
      if (total > best || p.memory.empty()) {
        best = total;
        p.memory = std::move(terms);
      }
    }
    p.peak_bytes = best;
  }

  std::vector<MemoryTerm> memoryOf(const GridCoords& c) const {
    std::vector<MemoryTerm> m;
    const std::size_t e = _run.element_bytes;
    m.push_back({"activations and gradients", _plan.totalBytes(c, e)});
    const std::size_t params = std::size_t(_run.all_parameters + _run.trainable_parameters) * 4;
    m.push_back({"parameters and their gradients", params});
    m.push_back({"optimizer state", std::size_t(_run.trainable_parameters) *
                                        std::size_t(_run.optimizer_state_per_parameter) * 4});
    // The allreduce's receive buffers (device memory; a GPU build stages through host copies). A
    // bf16 wire reduces in the gradients' own memory.
    m.push_back(
        {"gradient allreduce buffers", _plan.grid().size() > 1 && _run.gradient_wire_bytes == 4
                                           ? std::size_t(_run.trainable_parameters) * 4
                                           : 0});
    // The loader keeps the batch in use and the one being read: inputs in the activations'
    // precision (a bf16 run's loader delivers bf16), int32 labels.
    const TensorBlock in = _plan.block(0, c);
    std::size_t batch = allocationBytes(in, e);
    if (_run.labels_per_sample_cell > 0)
      batch += std::size_t(cellsOf(ownedShape(in)) / double(in.channels())) * 4;
    m.push_back({"data loader batches", batch * (_run.prefetch ? 2 : 1)});
    // Halo buffers: every exchange's packed messages, sent and received, both directions.
    std::size_t halo = 0, workspace = 0, scratchpad = 0, bridge = 0;
    const GridShape& g = _plan.grid();
    const bool host = _m.devices_per_node == 0;
    impl::DirectRule rule;
    rule.enabled = host;
    for (int id : _plan.order()) {
      const PlanNode& n = _plan.node(id);
      if (!n.layer) continue;
      const int src = n.inputs.at(0);
      if (dynamic_cast<const WindowLayer*>(n.layer) && g.spatialSize() > 1 &&
          _plan.node(src).spec.dist == Distribution::Spatial) {
        const impl::HaloPlan hp = impl::planHaloExchange(_plan.block(src, c), g, c.spatial());
        for (const bool gather : {true, false})
          for (const impl::WireMessage& w : impl::wireMessages(hp, gather, rule, e))
            if (!w.direct) halo += 2 * w.bytes;  // a send buffer and a receive buffer
      }
      if (e < sizeof(float) && n.layer->bridgesBf16()) {
        // A bf16 run's fallback (nn/PrecisionBridge.hpp), for the layers without native bf16
        // kernels: float copies of the blocks a pass reads and writes, freed after the pass. A
        // sliding-window layer converts its input and output (forward, then the weight gradient,
        // then the data gradient); other layers their inputs, output, and both gradients at once.
        std::size_t in = 0;
        for (int i : n.inputs)
          in += allocationBytes(_plan.block(i, c), sizeof(float));
        const std::size_t out = allocationBytes(_plan.block(id, c), sizeof(float));
        const bool window = dynamic_cast<const WindowLayer*>(n.layer) != nullptr;
        bridge = std::max(bridge, window ? in + out : 2 * (in + out));
      }
      // On the host the convolutions take their scratch from the scratchpad
      // (kernels/HostScratchpad.hpp), which stays allocated at the largest call's total: a
      // Conv3d's weight-gradient partial sums (double, one row per thread) with their offset
      // tables, or its packed weights (float ones in a bf16 run's float route), plus the
      // de-interleaved input of a W-strided layer (what Conv3d::work reports), or all that its
      // bf16 engines take (work's complete figure); a ConvTranspose3d's packed weights or partial
      // sums (what its work reports). On a device only a Conv3d's partial sums, transient: the
      // largest is counted.
      const TensorBlock out = _plan.block(id, c);
      const LayerWork w =
          n.layer->work({ownedShape(_plan.block(src, c))}, ownedShape(out), e, false);
      if (host && w.host_workspace_complete) {
        scratchpad = std::max(scratchpad, std::size_t(w.host_workspace_bytes));
      } else if (n.kind.rfind("Conv3d(", 0) == 0) {
        const double weights =
            w.flops_forward / 2 / cellsOf(ownedShape(out)) * double(out.channels());
        const double partials =
            (weights + double(out.channels())) * 8 * double(_run.threads_per_rank);
        if (host) {
          const double offsets = weights / double(out.channels()) * 16;
          const double packed = weights * double(std::max(e, sizeof(float)));
          scratchpad = std::max(scratchpad, std::size_t(w.host_workspace_bytes +
                                                        std::max(packed, partials + offsets)));
        } else {
          workspace = std::max(workspace, std::size_t(partials));
        }
      } else if (host) {
        scratchpad = std::max(scratchpad, std::size_t(w.host_workspace_bytes));
      }
      // A bf16 pass's float copies where no bf16 kernel runs, freed after it, as the bridge's.
      if (host && e < sizeof(float)) bridge = std::max(bridge, std::size_t(w.host_transient_bytes));
    }
    m.push_back({"halo buffers", halo});
    if (host)
      m.push_back({"host scratchpad", scratchpad});
    else
      m.push_back({"largest layer workspace", workspace});
    if (e < sizeof(float)) m.push_back({"bf16 fallback scratch (largest layer)", bridge});
    return m;
  }

  const ModelPlan& _plan;
  const Machine& _m;
  const RunShape& _run;
  double _eff;
  std::vector<std::string>& _notes;
  int _ranks_per_node = 1;
  double _stretch = 1;
  mutable std::map<int, double> _max_of_normals;  // expectedMaxOfNormals by group size
};

}  // namespace

double expectedMaxOfNormals(int k) {
  if (k <= 1) return 0;
  constexpr double kInvSqrt2Pi = 0.3989422804014327;
  // The integral of x k phi(x) Phi(x)^(k-1) over x: the density of the maximum is smooth and
  // negligible beyond [-10, 10] for any k a machine has.
  const double lo = -10, hi = 10;
  const int steps = 4000;
  const double h = (hi - lo) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; ++i) {
    const double x = lo + i * h;
    const double phi = std::exp(-0.5 * x * x) * kInvSqrt2Pi;
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    const double f = x * k * phi * std::pow(cdf, k - 1);
    sum += (i == 0 || i == steps ? 0.5 : 1.0) * f;
  }
  return sum * h;
}

double coreShare(const Machine& machine, int ranks_per_node, int threads_per_rank) {
  if (machine.devices_per_node > 0) return 1.0;
  return std::max(1.0, double(ranks_per_node * threads_per_rank) / double(machine.cores_per_node));
}

StepPrediction predictStep(const ModelPlan& plan, const Machine& machine, const RunShape& run) {
  require<InputError>(run.threads_per_rank >= 1, "threads per rank must be >= 1");
  std::vector<std::string> notes;
  StepPrediction p = Predictor(plan, machine, run, 0.5, notes).run();
  if (!machine.calibrated) {
    std::vector<std::string> ignored;
    p.step_band_s = {Predictor(plan, machine, run, 0.0, ignored).run().step_s,
                     Predictor(plan, machine, run, 1.0, ignored).run().step_s};
  } else {
    p.step_band_s = {p.step_s, p.step_s};
  }
  std::sort(notes.begin(), notes.end());
  notes.erase(std::unique(notes.begin(), notes.end()), notes.end());
  p.notes = notes;
  return p;
}

}  // namespace halo3d::nn
