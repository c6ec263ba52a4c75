// Linked into test_nccl_path: loopback arrays take the communicator's NCCL path in this program, MPI
// groups on host copies standing in for NCCL's (KUSARI_LOOPBACK_NCCL=1, set before main runs).
#include <stdlib.h>

namespace {

const bool stands_in = setenv("KUSARI_LOOPBACK_NCCL", "1", 1) == 0;

}  // namespace
