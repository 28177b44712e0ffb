// Explicit instantiations for the default memory space: the pack kernels compile once here (and
// under nvcc in the CUDA build), and users of these types link them instead of recompiling.
#include "halo3d/comm/HaloExchange.hpp"

namespace halo3d {

template class HaloExchange<float>;
template class HaloExchange<double>;
template class HaloExchange<bf16>;

}  // namespace halo3d
