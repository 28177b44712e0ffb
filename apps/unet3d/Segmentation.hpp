#pragma once
// Turning U-Net logits into a segmentation, and scoring it: voxel-wise softmax and argmax, and the
// hard Dice of an argmax prediction against the true labels from partial counts that ranks add up.
//
//   Dice_c = 2 |pred = c AND true = c| / (|pred = c| + |true = c|)      (1 when class c is absent
//   from both) mean foreground Dice = mean over c >= 1 (class 0 is the background)
//
// Counts are partial sums over a box, so that every rank counts its owned voxels and one allreduce
// gives the counts of the whole data set on every grid.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "halo3d/comm/ProcessGrid.hpp"
#include "halo3d/nn/Activation.hpp"

namespace halo3d::apps {

using Labels = HaloTensor<std::int32_t>;

// labels = argmax_c logits(n, c, .) over `box` (ties go to the lowest class, as torch.argmax); with
// `probs` allocated, also probs = softmax over c. logits and probs are (N, C, D, H, W), labels (N,
// 1, D, H, W), all holding the cells of `box` for the same samples.
void softmaxArgmax(const nn::Tensor& logits, const Labels& labels, const nn::Tensor& probs,
                   const Box& box);

// Per-class counts of an argmax prediction against the true labels.
struct DiceCounts {
  std::vector<double> intersection, predicted, truth;  // one per class

  explicit DiceCounts(index_t classes = 0)
      : intersection(std::size_t(classes)),
        predicted(std::size_t(classes)),
        truth(std::size_t(classes)) {}
  index_t classes() const { return index_t(truth.size()); }
  // Adds the counts of `pred` against `truth` over `box` (labels (N, 1, D, H, W) of the same
  // samples). Labels outside [0, classes) count in no class.
  void add(const Labels& pred, const Labels& truth, const Box& box);
  // Sums the counts over `comm` (collective).
  void allreduce(MPI_Comm comm);
  DiceCounts& operator+=(const DiceCounts& o);

  double dice(index_t c) const;
  // Mean of dice(c) over c = 1 .. classes-1.
  double meanForeground() const;
  // "dice [bg 0.99, 1 0.91, 2 0.75] mean foreground 0.83"
  std::string summary() const;
  // {"dice": [per class], "mean_foreground_dice": m}
  nlohmann::json json() const;
};

}  // namespace halo3d::apps
