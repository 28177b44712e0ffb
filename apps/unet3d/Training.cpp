#include "halo3d/apps/unet3d/Training.hpp"

#include "halo3d/apps/common/EvaluationRun.hpp"
#include "halo3d/apps/common/GridPlanning.hpp"
#include "halo3d/apps/common/RunSupport.hpp"
#include "halo3d/apps/common/TrainingRun.hpp"
#include "halo3d/apps/unet3d/UNetTask.hpp"

namespace halo3d::apps {

int trainUNet(const UNetOptions& o) {
  UNetTask task(o);
  ProcessGrid grid(MPI_COMM_WORLD, resolveGrid(o, task, true));
  TrainingRun run(grid, o, task);
  return run.train();
}

int evalUNet(const UNetOptions& o) {
  ProcessGrid grid(MPI_COMM_WORLD, gridFromOption(o.grid));
  UNetTask task(o);
  return EvaluationRun(grid, o, task).run();
}

}  // namespace halo3d::apps
