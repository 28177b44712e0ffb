#pragma once
// Transitional forwarding header: apps/unet3d/Segmentation.cpp still includes it for
// impl::readCells/writeCells. Delete it when that file calls kernels/Segmentation.hpp instead
// (tests/cmake/check_kernel_includes.sh then fails until it is gone).

#include "halo3d/kernels/KernelTypes.hpp"
#include "halo3d/kernels/impl/GlobalCells.hpp"
