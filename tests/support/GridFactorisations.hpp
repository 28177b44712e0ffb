#pragma once
// Every ordered factorisation of a rank count into a process grid N x D x H x W (core's allGrids).
#include "halo3d/core/GridShape.hpp"

namespace halo3d::testing {

using halo3d::allGrids;

}  // namespace halo3d::testing
