#include "halo3d/apps/unet3d/Segmentation.hpp"

#include <cstdio>

#include "halo3d/comm/Allreduce.hpp"
#include "halo3d/core/Error.hpp"
#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/impl/ElementwiseViews.hpp"

namespace halo3d::apps {

namespace {
using Policy4 = Kokkos::MDRangePolicy<Kokkos::Rank<4>, Kokkos::IndexType<index_t>>;

Policy4 cellsOf(const Box& box, index_t samples) {
  return Policy4({0, box.min(0), box.min(1), box.min(2)},
                 {samples, box.max(0), box.max(1), box.max(2)});
}

void requireHolds(const char* what, const TensorBlock& b, index_t samples, const Box& box) {
  require<ShapeError>(b.localSamples() == samples && b.owned().contains(box), what, " holds ",
                      b.localSamples(), " samples over ", b.owned(), ", not the ", samples,
                      " samples over ", box);
}
}  // namespace

void softmaxArgmax(const nn::Tensor& logits, const Labels& labels, const nn::Tensor& probs,
                   const Box& box) {
  const index_t samples = logits.block().localSamples(), classes = logits.block().channels();
  requireHolds("logits", logits.block(), samples, box);
  requireHolds("labels", labels.block(), samples, box);
  require<ShapeError>(labels.block().channels() == 1, "labels have ", labels.block().channels(),
                      " channels, expected 1");
  const bool with_probs = probs.isAllocated();
  if (with_probs) {
    requireHolds("probabilities", probs.block(), samples, box);
    require<ShapeError>(probs.block().channels() == classes, "probabilities have ",
                        probs.block().channels(), " channels, the logits ", classes);
  }
  const auto x = kernels::impl::readCells(logits);
  const auto y = kernels::impl::writeCells(labels);
  const auto p = with_probs ? kernels::impl::writeCells(probs)
                            : kernels::impl::GlobalCells<nn::real, nn::Tensor::memory_space>{};
  Kokkos::parallel_for(
      "halo3d::softmaxArgmax", cellsOf(box, samples),
      KOKKOS_LAMBDA(index_t n, index_t d, index_t h, index_t w) {
        nn::real best = x(n, 0, d, h, w);
        std::int32_t arg = 0;
        for (index_t c = 1; c < classes; ++c)
          if (x(n, c, d, h, w) > best) {
            best = x(n, c, d, h, w);
            arg = std::int32_t(c);
          }
        y(n, 0, d, h, w) = arg;
        if (!with_probs) return;
        nn::real sum = 0;
        for (index_t c = 0; c < classes; ++c)
          sum += math::exp(x(n, c, d, h, w) - best);
        for (index_t c = 0; c < classes; ++c)
          p(n, c, d, h, w) = math::exp(x(n, c, d, h, w) - best) / sum;
      });
  Kokkos::fence();
}

void DiceCounts::add(const Labels& pred, const Labels& truth_labels, const Box& box) {
  const index_t samples = pred.block().localSamples();
  requireHolds("predicted labels", pred.block(), samples, box);
  requireHolds("true labels", truth_labels.block(), samples, box);
  const auto a = kernels::impl::readCells(pred);
  const auto b = kernels::impl::readCells(truth_labels);
  // One pass per class and count: classes are few, and three scalar sums keep the reduction
  // portable.
  for (index_t c = 0; c < classes(); ++c) {
    const std::int32_t k = std::int32_t(c);
    double i = 0, p = 0, t = 0;
    Kokkos::parallel_reduce(
        "halo3d::diceIntersection", cellsOf(box, samples),
        KOKKOS_LAMBDA(index_t n, index_t d, index_t h, index_t w, double& s) {
          s += (a(n, 0, d, h, w) == k && b(n, 0, d, h, w) == k) ? 1.0 : 0.0;
        },
        i);
    Kokkos::parallel_reduce(
        "halo3d::dicePredicted", cellsOf(box, samples),
        KOKKOS_LAMBDA(index_t n, index_t d, index_t h, index_t w, double& s) {
          s += a(n, 0, d, h, w) == k ? 1.0 : 0.0;
        },
        p);
    Kokkos::parallel_reduce(
        "halo3d::diceTruth", cellsOf(box, samples),
        KOKKOS_LAMBDA(index_t n, index_t d, index_t h, index_t w, double& s) {
          s += b(n, 0, d, h, w) == k ? 1.0 : 0.0;
        },
        t);
    intersection[std::size_t(c)] += i;
    predicted[std::size_t(c)] += p;
    truth[std::size_t(c)] += t;
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
