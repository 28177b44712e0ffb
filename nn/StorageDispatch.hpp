#pragma once
// A layer pass written once over the storage type of its activations: `real` in fp32 runs, bf16 in
// bf16 runs (nn/Precision.hpp). The memory-bound kernels take either storage under the same name
// (kernels/README.md, "bf16 activations"), so a pass body that is a template over the storage
// calls the same kernels in both precisions. bf16 is instantiated only in the float32 layer stack:
// the float64 test library refuses bf16 at build, and there its kernels would mix double
// parameters with float ones.

#include <type_traits>
#include <vector>

#include "halo3d/core/Error.hpp"
#include "halo3d/nn/Activation.hpp"
#include "halo3d/nn/PrecisionBridge.hpp"

namespace halo3d::nn {

template <class T>
struct Storage {
  using type = T;
};

// The cells of `a` held as T (InputError naming `a` if it holds the other storage).
template <class T>
const HaloTensor<T>& storageOf(const Activation& a) {
  if constexpr (std::is_same<T, bf16>::value)
    return a.bf16Tensor();
  else
    return a.floatTensor();
}

// body(Storage<T>()) with T the storage of `a`.
template <class Body>
void onStorage(const Activation& a, Body&& body) {
  if constexpr (std::is_same<real, float>::value) {
    if (a.isBf16()) return body(Storage<bf16>());
  } else {
    require(!a.isBf16(), "bf16 activation '", a.tensor_bf16.label(),
            "' in the float64 layer stack, which runs fp32 only");
  }
  body(Storage<real>());
}

// Whether a pass over these activations goes through the precision bridge although the layer has
// native bf16 kernels: some of them hold bf16 and native kernels are off (setNativeBf16Kernels).
inline bool bridgedBf16(const std::vector<const Activation*>& a) {
  return !nativeBf16Kernels() && anyBf16(a);
}

}  // namespace halo3d::nn
