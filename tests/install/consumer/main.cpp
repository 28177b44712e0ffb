// A user project: find_package(halo3d) and the installed headers, linked against halo3d::comm.
#include <halo3d/comm/ProcessGrid.hpp>
#include <halo3d/core/GridShape.hpp>

#include <cstdio>

// The installed package puts only <prefix>/include on the include path: no generic folder names.
#if __has_include("core/GridShape.hpp") || __has_include(<core/GridShape.hpp>)
#error "halo3d's package put a generic folder (core/) on the consumer's include path"
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    halo3d::ProcessGrid grid(MPI_COMM_WORLD, halo3d::GridShape::parse("1x1x1x1"));
    std::printf("consumer: grid %s\n", grid.shape().str().c_str());
  }
  MPI_Finalize();
  return 0;
}
