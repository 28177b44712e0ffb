// compare_labels A.h5 B.h5 MIN_AGREEMENT: compares the /labels volumes of two `unet3d predict`
// outputs. Prints the fraction of voxels with the same label; exits 0 if it is at least
// MIN_AGREEMENT (1 means identical), 1 otherwise or if the volumes differ in size, 2 on a read
// error.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "halo3d/apps/unet3d/PredictionFile.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s A.h5 B.h5 MIN_AGREEMENT\n", argv[0]);
    return 2;
  }
  try {
    halo3d::Extents3 ea, eb;
    const auto a = halo3d::apps::readPredictionLabels(argv[1], ea);
    const auto b = halo3d::apps::readPredictionLabels(argv[2], eb);
    if (ea != eb) {
      std::printf("volumes differ: %lldx%lldx%lld against %lldx%lldx%lld\n", (long long)ea[0],
                  (long long)ea[1], (long long)ea[2], (long long)eb[0], (long long)eb[1],
                  (long long)eb[2]);
      return 1;
    }
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      same += a[i] == b[i];
    const double agreement = double(same) / double(a.size());
    const double wanted = std::atof(argv[3]);
    std::printf("%zu of %zu voxels agree (%.6f; required %.6f)\n", same, a.size(), agreement,
                wanted);
    return agreement >= wanted ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compare_labels: %s\n", e.what());
    return 2;
  }
}
