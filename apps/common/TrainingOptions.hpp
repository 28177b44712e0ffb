#pragma once
// The flags every training application shares (docs/cosmoflow.md and docs/unet3d.md list them): the
// grid and data, the data pipeline, optimisation and schedule, checkpoints and resume, metrics and
// the watchdog. An application's options extend this struct with its model's flags.

#include <cstddef>
#include <cstdint>
#include <string>

#include "halo3d/core/Types.hpp"
#include "halo3d/nn/LrSchedule.hpp"
#include "halo3d/nn/Optimizer.hpp"
#include "halo3d/nn/Precision.hpp"

namespace halo3d::apps {

// --resume: not given (start from scratch; a directory that already holds checkpoints is refused),
// `--resume` (a valid checkpoint is required), `--resume=if-any` (continue from one if there is
// one, else start from scratch).
enum class ResumeMode { Off, Required, IfAny };

struct TrainingOptions {
  std::string
      grid;  // NxDxHxW, or "auto" (train: the fastest predicted grid that fits); default 1xPx1x1
  std::string data, val_data;
  index_t batch = 2;  // global mini-batch
  std::uint64_t seed = 1;
  std::string init_weights;  // FILE.h5[:/group]
  std::string checkpoint_dir;
  std::string metrics;
  // Data pipeline.
  bool no_overlap = false;
  bool no_prefetch = false;
  double data_store_gib = 0.0;
  std::string mpiio = "independent";  // independent | collective
  std::string transform = "none";     // InputTransform::parse syntax
  // Activations, their gradients and halos in fp32 or bf16 (--precision; nn/Precision.hpp).
  nn::Precision precision = nn::Precision::fp32;
  // The gradient allreduce's wire (--allreduce-precision; nn/GradientReducer.hpp): bf16 halves its
  // bytes and reduces in place, with no receive buffer.
  nn::Precision allreduce_precision = nn::Precision::fp32;
  // Planning (docs/cosmoflow.md, "Memory and the choice of grid").
  std::size_t memory_limit = 0;  // bytes per rank the plan must fit (--memory-limit; 0: no limit)
  std::string machine;           // machine file of the performance model (--machine; "": default)
  // Length and optimisation (train).
  long epochs = 1;
  long steps = 0;  // total optimizer steps (counted across resumes); 0: --epochs decides
  nn::OptimizerKind optimizer = nn::OptimizerKind::Adam;
  double lr = 1e-3, momentum = 0.9;
  long warmup_steps = 0;
  nn::LrDecay lr_decay = nn::LrDecay::None;
  long lr_step_every = 1000;
  double lr_gamma = 0.1;
  bool no_shuffle = false;
  // Checkpoints, resume, reliability (train).
  long checkpoint_every = 0;  // steps; 0: at each epoch end (and always at the end of the run)
  int keep_checkpoints = 3;
  ResumeMode resume = ResumeMode::Off;
  double stall_timeout = 600;  // seconds without progress before the watchdog aborts; 0: off
  // Not flags: what a program driving many runs (the sweep) turns off.
  bool print_model = true;  // rank 0 prints the model summary when the run starts
};

}  // namespace halo3d::apps
