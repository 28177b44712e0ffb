// Softmax-argmax and the Dice counts; see Segmentation.hpp for the contracts and the layout of the
// counts.
#include "halo3d/kernels/Segmentation.hpp"

#include "halo3d/core/KokkosCompat.hpp"
#include "halo3d/kernels/impl/ElementwiseLoops.hpp"
#include "halo3d/kernels/impl/ElementwiseReduce.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
#include "halo3d/kernels/impl/TensorChecks.hpp"

namespace halo3d::kernels {

template <class ExecSpace, class T, class L>
void softmaxArgmax(const ExecSpace& exec, const Tensor<T, ExecSpace>& logits,
                   const Tensor<L, ExecSpace>& labels, const Tensor<T, ExecSpace>& probs,
                   const Box& box, KernelPath path) {
  const char* kernel = "softmaxArgmax";
  require<ShapeError>(labels.block().channels() == 1, kernel, ": labels have ",
                      labels.block().channels(), " channels, expected 1: ", impl::describe(labels));
  impl::requireLabelsFor(kernel, logits, labels, box);
  impl::requireOwned(kernel, labels, box);
  impl::requireAllocated(kernel, logits, box, "box");
  const bool with_probs = probs.isAllocated();
  if (with_probs) {
    impl::requireSameShape(kernel, probs, logits);
    impl::requireOwned(kernel, probs, box);
  }
  using C = ComputeType<T>;
  const index_t classes = logits.block().channels();
  const auto x = impl::readCells(logits);
  const auto y = impl::writeCells(labels);
  const auto p = with_probs ? impl::writeCells(probs)
                            : impl::GlobalCells<T, typename ExecSpace::memory_space>{};
  impl::forEachRow(
      exec, "halo3d::softmaxArgmax", logits.block().localSamples(), 1, box,
      KOKKOS_LAMBDA(index_t n, index_t, index_t d, index_t h, index_t w0, index_t w1) {
        for (index_t w = w0; w < w1; ++w) {
          C best = C(x(n, 0, d, h, w));
          L arg = 0;
          for (index_t c = 1; c < classes; ++c)
            if (C(x(n, c, d, h, w)) > best) {
              best = C(x(n, c, d, h, w));
              arg = L(c);
            }
          y(n, 0, d, h, w) = arg;
          if (!with_probs) continue;
          C sum = 0;
          for (index_t c = 0; c < classes; ++c)
            sum += math::exp(C(x(n, c, d, h, w)) - best);
          for (index_t c = 0; c < classes; ++c)
            p(n, c, d, h, w) = T(math::exp(C(x(n, c, d, h, w)) - best) / sum);
        }
      },
      path);
}

template <class ExecSpace, class L>
void diceCounts(const ExecSpace& exec, const Tensor<L, ExecSpace>& pred,
                const Tensor<L, ExecSpace>& truth, index_t classes,
                const Vector<double, ExecSpace>& counts, const Box& box, bool accumulate,
                KernelPath path) {
  const char* kernel = "diceCounts";
  require<ShapeError>(classes >= 1, kernel, ": ", classes, " classes; at least 1 is needed");
  require<ShapeError>(pred.block().channels() == 1, kernel, ": predicted labels have ",
                      pred.block().channels(), " channels, expected 1: ", impl::describe(pred));
  impl::requireSameShape(kernel, truth, pred);
  impl::requireAllocated(kernel, pred, box, "box");
  impl::requireAllocated(kernel, truth, box, "box");
  impl::requireExtent(kernel, counts, 0, diceCountsSize(classes), "3 C");
  const auto a = impl::readCells(pred);
  // One group per class, each a fixed-size accumulator of three counts.
  impl::classOverlapSums(
      exec, "halo3d::diceCounts", classes, truth, box,
      KOKKOS_LAMBDA(index_t c, index_t n, index_t d, index_t h, index_t w) {
        return a(n, 0, d, h, w) == L(c) ? 1.0 : 0.0;
      },
      counts, accumulate, path);
}

HALO3D_KERNELS_FOR_REALS_AND_LABELS(HALO3D_KERNELS_SEGMENTATION, )
HALO3D_KERNELS_FOR_BF16_AND_LABELS(HALO3D_KERNELS_SEGMENTATION, )
HALO3D_KERNELS_FOR_LABELS(HALO3D_KERNELS_DICE_COUNTS, )

}  // namespace halo3d::kernels
