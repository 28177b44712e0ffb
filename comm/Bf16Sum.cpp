#include "halo3d/comm/Bf16Sum.hpp"

#include <cstring>

#include "halo3d/comm/Communicator.hpp"
#include "halo3d/core/BFloat16.hpp"

namespace halo3d {

namespace {

void sumBf16(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const bf16*>(in);
  auto* b = static_cast<bf16*>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = bf16(float(a[i]) + float(b[i]));
}

MPI_Op g_op = MPI_OP_NULL;

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI calls are still allowed.
int freeOpAtFinalize(MPI_Comm, int, void*, void*) {
  if (g_op != MPI_OP_NULL) MPI_Op_free(&g_op);
  return MPI_SUCCESS;
}

}  // namespace

MPI_Op bf16SumOp() {
  if (g_op != MPI_OP_NULL) return g_op;
  checkMpi(MPI_Op_create(&sumBf16, /*commute=*/1, &g_op), "MPI_Op_create (bf16 sum)");
  int keyval = MPI_KEYVAL_INVALID;
  checkMpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &freeOpAtFinalize, &keyval, nullptr),
           "MPI_Comm_create_keyval (bf16 sum)");
  checkMpi(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr), "MPI_Comm_set_attr (bf16 sum)");
  return g_op;
}

}  // namespace halo3d
