#include "halo3d/apps/unet3d/Flags.hpp"

namespace halo3d::apps {

void addUNetFlags(CLI::App* cmd, UNetOptions& o, FlagSet set) {
  cmd->add_option("--in-channels", o.in_channels, "input channels (checked against the data)");
  cmd->add_option("--base", o.base, "channels of the first level (doubling per level)")
      ->check(atLeast(1))
      ->capture_default_str();
  cmd->add_option("--depth", o.depth, "levels of the encoder (the volume must divide by 2^depth)")
      ->capture_default_str();
  cmd->add_option("--classes", o.classes, "segmentation classes, background included")
      ->capture_default_str();
  addBnStatsFlag(cmd, o.bn_stats);
  if (set == FlagSet::Predict) {
    cmd->add_option("--sample", o.sample, "sample id in --data (files in name order)")
        ->check(atLeast(0))
        ->capture_default_str();
    cmd->add_option("--out", o.out, "output HDF5 file: labels (D, H, W) uint8 [+ probabilities]")
        ->required();
    cmd->add_flag("--probabilities", o.probabilities,
                  "also write the softmax per class (C, D, H, W) float32");
    cmd->add_flag("--pad", o.pad,
                  "pad the volume with zeros to a multiple of 2^depth (cropped from the output)");
    cmd->add_option("--tile", o.tile, "sliding-window tile edge (0: the whole volume at once)")
        ->check(atLeast(0))
        ->capture_default_str();
    cmd->add_option("--overlap", o.overlap, "sliding-window overlap in [0, 1)")
        ->capture_default_str();
    cmd->add_option("--sigma-scale", o.sigma_scale, "Gaussian blending sigma over the tile edge")
        ->check(above(0))
        ->capture_default_str();
    return;
  }
  cmd->add_option("--input-size", o.input_size, "input edge D = H = W (checked against the data)");
  addChoice(cmd, "--loss", o.loss, kSegmentationLosses, segmentationLossName,
            "ce (voxel-wise cross-entropy) or dice (soft Dice)");
}

}  // namespace halo3d::apps
