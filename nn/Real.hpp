#pragma once
// The scalar type of the layer/optimizer stack: float by default. The library is also built with
// HALO3D_NN_REAL=double (target halo3d_nn_fp64, tests only) to check the distributed algorithms
// against the float64 PyTorch reference without fp32 rounding in the way.

#ifndef HALO3D_NN_REAL
#define HALO3D_NN_REAL float
#endif

namespace halo3d::nn {
using real = HALO3D_NN_REAL;
}  // namespace halo3d::nn
