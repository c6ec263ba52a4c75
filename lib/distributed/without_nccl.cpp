// The NCCL channel in a build without the CUDA backend: none is ever made.

#include <kusari/core/error.h>
#include <kusari/distributed/detail/nccl_channel.h>

namespace kusari::distributed {

bool nccl_available() { return false; }

struct NcclChannel::State {};

NcclChannel::NcclChannel(MPI_Comm, int device) {
  throw DeviceError(cat("NCCL communicator for cuda:", device, ": this kusari was built without its CUDA backend"));
}

NcclChannel::~NcclChannel() = default;

void NcclChannel::allreduce_sum(void*, int64_t, Dtype) {
  throw DeviceError("NCCL allreduce: this kusari was built without its CUDA backend");
}

int NcclChannel::device() const { return -1; }

}  // namespace kusari::distributed
