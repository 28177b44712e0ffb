#include "halo3d/apps/unet3d/Segmentation.hpp"

#include <cstdio>

#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/Segmentation.hpp"

namespace halo3d::apps {

void softmaxArgmax(const nn::Tensor& logits, const Labels& labels, const nn::Tensor& probs,
                   const Box& box) {
  kernels::softmaxArgmax(logits, labels, probs, box);
  Kokkos::fence();
}

void DiceCounts::add(const Labels& pred, const Labels& truth_labels, const Box& box) {
  const index_t c = classes();
  const kernels::Vector<double, kernels::DefaultExec> counts("halo3d::diceCounts",
                                                             kernels::diceCountsSize(c));
  kernels::diceCounts(pred, truth_labels, c, counts, box);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  for (index_t k = 0; k < c; ++k) {
    intersection[std::size_t(k)] += h(k);
    predicted[std::size_t(k)] += h(c + k);
    truth[std::size_t(k)] += h(2 * c + k);
  }
}

void DiceCounts::allreduce(MPI_Comm comm) {
  allreduceSum(intersection.data(), intersection.size(), comm);
  allreduceSum(predicted.data(), predicted.size(), comm);
  allreduceSum(truth.data(), truth.size(), comm);
}

DiceCounts& DiceCounts::operator+=(const DiceCounts& o) {
  require(o.classes() == classes(), "adding Dice counts of ", o.classes(), " classes to counts of ",
          classes());
  for (std::size_t c = 0; c < truth.size(); ++c) {
    intersection[c] += o.intersection[c];
    predicted[c] += o.predicted[c];
    truth[c] += o.truth[c];
  }
  return *this;
}

double DiceCounts::dice(index_t c) const {
  const std::size_t k = std::size_t(c);
  const double denominator = predicted[k] + truth[k];
  return denominator > 0 ? 2.0 * intersection[k] / denominator : 1.0;
}

double DiceCounts::meanForeground() const {
  double sum = 0;
  for (index_t c = 1; c < classes(); ++c)
    sum += dice(c);
  return classes() > 1 ? sum / double(classes() - 1) : 0.0;
}

std::string DiceCounts::summary() const {
  std::string s = "dice [";
  char buf[64];
  for (index_t c = 0; c < classes(); ++c) {
    std::snprintf(buf, sizeof buf, "%s%lld: %.4f", c ? ", " : "", (long long)c, dice(c));
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "]  mean foreground %.4f", meanForeground());
  return s + buf;
}

nlohmann::json DiceCounts::json() const {
  nlohmann::json per_class = nlohmann::json::array();
  for (index_t c = 0; c < classes(); ++c)
    per_class.push_back(dice(c));
  return {{"dice", per_class}, {"mean_foreground_dice", meanForeground()}};
}

}  // namespace halo3d::apps
