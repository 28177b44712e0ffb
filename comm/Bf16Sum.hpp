#pragma once
// Summing bf16 arrays with MPI: MPI has no bf16 type, so the values travel as MPI_UINT16_T and a
// user-defined operation adds them. Each addition is done in float and rounded once to bf16
// (nearest even): a sum over P ranks is rounded once per level of MPI's reduction tree, about
// log2(P) times, each time by at most half a bf16 ulp of the partial sum.

#include <mpi.h>

namespace halo3d {

// The sum operation for bf16 arrays sent as MPI_UINT16_T. Created on first use and freed when MPI
// is finalized (an MPI_Comm_create_keyval delete callback on MPI_COMM_SELF), so every holder
// may keep it for the life of the process.
MPI_Op bf16SumOp();

}  // namespace halo3d
