#pragma once
// The performance model: the predicted time of one training step and the memory per rank, for a
// (model plan, machine, run) triple, without MPI and without running the model.
//
// Per layer and pass, on each representative rank (the first, a middle and the last position along
// every split dimension: the first holds the largest blocks, a middle one the most neighbours):
//   compute    the calibrated time of the layer on that rank's blocks (Machine::layers, timed in a
//              step's order: nn::calibrate), or the
//              roofline estimate (FLOPs and bytes over the machine's rates times an efficiency);
//   halo       the exchange's exact bytes and messages (comm::haloMessagePlan), alpha-beta per link
//              class (a neighbour on the same node: shared memory; else network); with overlap, the
//              interior compute hides it, leaving max(0, exchange - interior compute);
//   redistribution  the replication's ring allgather over the spatial group, alpha-beta;
//   allreduce  BatchNorm's statistics (recursive doubling), the loss, and the gradient buckets
//              (MPI_Iallreduce into a receive buffer, for which Open MPI's libnbc takes binomial
//              under 4 ranks or 64 KiB, else reduce-scatter + allgather: 2 log2 P alpha +
//              2 (P-1)/P n beta + (P-1)/P n gamma per bucket; a bf16 wire: half the bytes, in
//              place, binomial), which backward does not hide;
//   io         the batch read (the loader's time for the largest rank's block of the run's data,
//              calibrated as RunShape::batch_read; else the bytes over the read rate), hidden by
//              prefetch up to the step's time
//              when a core is free for the loader's thread (a device machine, or host ranks times
//              threads below the node's cores), else the whole read.
//   input      storing the batch block into the model's input before forward (calibrated as
//              "input store"; counted in compute).
//   loss       the loss and its gradient on the largest rank's output block, between forward and
//              backward (calibrated as "loss <RunShape::loss>"; counted in compute).
// The step takes the sum over layers of the slowest representative rank. Ranks times threads beyond
// a node's cores share them: host compute and copies stretch by that factor, s, and
//   timeshare  ranks that time-share cores do not arrive together where they synchronise (a halo
//              exchange, a replication's allgather, BatchNorm's and the step's allreduces): each of
//              the k ranks that meet has received its share of the core in slices of the
//              scheduler's length q (Machine::scheduler_slice_s, calibrated), so its arrival after
//              D seconds of stretched compute since the previous synchronisation deviates by
//              sigma = sqrt(D min(D, q) (s - 1)) / s (a random walk of D / q slices in which the
//              scheduler runs the rank furthest behind, at most one step of D when D < q), and the
//              group waits for the latest: E[max of k
//              standard normals] x sigma per synchronisation. Here s counts the runnable threads
//              per core: the ranks' threads and, when they fill the cores, each prefetching
//              loader's thread for the read's share of the step. Nothing without a measured slice,
//              on devices, or with s <= 1.
//              Ranks on separate host cores (at most one rank's threads per core, more than one
//              rank; a loader's thread may still time-share above) add Machine::core_pacing times
//              the step's compute: each core runs at its own speed and the ranks wait for the
//              slower where they meet; booked on each layer by its compute, the rest (input
//              store, loss, optimizer) on the step.
//
// Memory (bytes per rank, the largest rank): activations and gradients (ModelPlan), parameters and
// their gradients, optimizer state, the gradient allreduce's receive buffers (none with a bf16
// wire), the data loader's
// batch buffers, halo buffers, and on the host the convolutions' scratchpad (kept between calls at
// the largest call's total), on a device the largest layer workspace (transient). With bf16
// activations (element_bytes 2) parameters and optimizer state stay 4 bytes, and the largest float
// scratch of the precision bridge is added (transient, counted once) over the layers that still
// bridge a bf16 pass (Layer::bridgesBf16; native kernels on, the default).

#include <string>
#include <vector>

#include "halo3d/nn/plan/Machine.hpp"
#include "halo3d/nn/plan/ModelPlan.hpp"

namespace halo3d::nn {

// What the plan alone does not say about a run.
struct RunShape {
  int threads_per_rank = 1;
  int ranks_per_node = 0;         // 0: as many as the machine has cores (or devices)
  std::size_t element_bytes = 4;  // activations, halos (fp32: 4, bf16: 2)
  index_t trainable_parameters = 0, all_parameters = 0;
  int optimizer_state_per_parameter = 2;            // Adam 2, SGD with momentum 1
  std::size_t bucket_bytes = std::size_t(4) << 20;  // of fp32 gradients
  std::size_t gradient_wire_bytes = 4;              // the allreduce's element (fp32 4, bf16 2)
  bool overlap = true;
  bool prefetch = true;
  index_t labels_per_sample_cell = 0;  // U-Net: 1 (int32 labels); CosmoFlow: 0
  double read_bytes_per_rank = 0;      // per step; 0: the input block
  // The name of the batch read's timing in the machine file (batchReadKey, Calibration.hpp): the
  // data loader's own time for a step's batch, measured on the run's data. Empty, or not in the
  // file: the read is priced at io.read_bytes_per_s.
  std::string batch_read;
  // The loss whose timing prices the step's loss and its gradient (lossKey, Calibration.hpp:
  // "mse", "ce" or "dice"). Empty, or not in the file: left out.
  std::string loss;
};

struct MemoryTerm {
  std::string what;  // "activations and gradients", "parameters", ...
  std::size_t bytes = 0;
};

struct LayerPrediction {
  std::string name;
  double forward_s = 0, backward_s = 0;      // compute
  double halo_s = 0;                         // exposed exchange time, both passes
  double halo_bytes = 0, halo_messages = 0;  // per step on the busiest rank, both passes
  double redistribute_s = 0, allreduce_s = 0;
  double timeshare_s = 0;  // lateness of time-sharing ranks, or pacing, at this layer
};

struct StepPrediction {
  double step_s = 0;
  double compute_s = 0, halo_s = 0, redistribute_s = 0, allreduce_s = 0, io_s = 0;
  double timeshare_s = 0;  // lateness where ranks meet: time-sharing, or separate cores' pacing
  double input_s = 0;      // storing the batch into the model's input (part of compute_s)
  double loss_s = 0;       // the loss and its gradient (part of compute_s)
  std::array<double, 2> step_band_s{0, 0};  // roofline machines: the efficiency band (slow, fast)
  std::vector<LayerPrediction> layers;
  std::size_t peak_bytes = 0;
  std::vector<MemoryTerm> memory;
  std::vector<std::string> notes;  // e.g. layers timed by scaling the nearest calibrated block
};

StepPrediction predictStep(const ModelPlan& plan, const Machine& machine, const RunShape& run);

// How many times host work stretches when `ranks_per_node` ranks of `threads_per_rank` threads
// share a node's cores: their threads over the cores, at least 1; 1 on a device machine.
double coreShare(const Machine& machine, int ranks_per_node, int threads_per_rank);

// E[max of k independent standard normal variables] (0 for k <= 1; 1/sqrt(pi) for k = 2).
double expectedMaxOfNormals(int k);

}  // namespace halo3d::nn
