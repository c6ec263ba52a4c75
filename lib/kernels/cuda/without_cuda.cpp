// kusari::cuda in a build without the CUDA backend: no devices, and a reason that says how to get them;
// no NCCL group either, and stream marks that have always passed.

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/nccl_group.h>
#include <kusari/kernels/cuda/detail/stream_order.h>
#include <kusari/kernels/cuda/runtime.h>

namespace kusari::cuda {

bool built_with_cuda() { return false; }

bool emulated() { return false; }

int device_count() { return 0; }

std::string unavailable_reason() {
  return "no CUDA device: this kusari was built without its CUDA backend (meson -Dcuda=enabled, with nvcc, "
         "cuDNN and NCCL under -Dcuda-root)";
}

void synchronize(int index) { throw DeviceError(cat("cuda::synchronize(", index, "): ", unavailable_reason())); }

void empty_cache() {}

void reset_peak_memory_stats() {}

}  // namespace kusari::cuda

namespace kusari::kernels::cuda {

bool nccl_available() { return false; }

struct NcclGroup::State {};

NcclGroup::NcclGroup(int, int, int device, const std::function<void(void*, size_t)>&, const WatchSettings&,
                     const std::function<void(const std::string&)>&) {
  throw DeviceError(cat("NCCL communicator for cuda:", device, ": ", kusari::cuda::unavailable_reason()));
}

NcclGroup::~NcclGroup() = default;

void NcclGroup::allreduce_sum(const Array&, const Array&) {
  throw DeviceError(cat("ncclAllReduce: ", kusari::cuda::unavailable_reason()));
}

void NcclGroup::allreduce_max(const Array&, const Array&) {
  throw DeviceError(cat("ncclAllReduce: ", kusari::cuda::unavailable_reason()));
}

void NcclGroup::reduce_sum(const Array&, const Array&, int) {
  throw DeviceError(cat("ncclReduce: ", kusari::cuda::unavailable_reason()));
}

void NcclGroup::broadcast(const Array&, int) {
  throw DeviceError(cat("ncclBroadcast: ", kusari::cuda::unavailable_reason()));
}

void NcclGroup::reduce_scatter_sum(const Array&, const Array&) {
  throw DeviceError(cat("ncclReduceScatter: ", kusari::cuda::unavailable_reason()));
}

void NcclGroup::allgather(const Array&, const Array&) {
  throw DeviceError(cat("ncclAllGather: ", kusari::cuda::unavailable_reason()));
}

void NcclGroup::allreduce_sums_at_once(const std::vector<NcclGroup*>&, const std::vector<Array>&) {
  throw DeviceError(cat("ncclAllReduce: ", kusari::cuda::unavailable_reason()));
}

int NcclGroup::device() const { return -1; }

int NcclGroup::size() const { return 0; }

StreamMark mark_stream(const Device&) { return {}; }

void wait_for(const Device&, const StreamMark&) {}

void mark_used_here(const Array&) {}

CommunicationStreamScope::CommunicationStreamScope(const Device&) : previous_(0) {}

CommunicationStreamScope::~CommunicationStreamScope() = default;

}  // namespace kusari::kernels::cuda
