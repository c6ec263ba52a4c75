// kusari::cuda in a build without the CUDA backend: no devices, and a reason that says how to get them;
// no NCCL group either.

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/nccl_group.h>
#include <kusari/kernels/cuda/runtime.h>

namespace kusari::cuda {

bool built_with_cuda() { return false; }

int device_count() { return 0; }

std::string unavailable_reason() {
  return "no CUDA device: this kusari was built without its CUDA backend (meson -Dcuda=enabled, with nvcc, "
         "cuDNN and NCCL under -Dcuda-root)";
}

void synchronize(int index) { throw DeviceError(cat("cuda::synchronize(", index, "): ", unavailable_reason())); }

void empty_cache() {}

namespace {
// The setting is kept (and read back) although no convolution here uses it.
bool benchmark = false;
}  // namespace

void set_cudnn_benchmark(bool enabled) { benchmark = enabled; }

bool cudnn_benchmark() { return benchmark; }

}  // namespace kusari::cuda

namespace kusari::kernels::cuda {

bool nccl_available() { return false; }

struct NcclGroup::State {};

NcclGroup::NcclGroup(int, int, int device, const std::function<void(void*, size_t)>&) {
  throw DeviceError(cat("NCCL communicator for cuda:", device, ": ", kusari::cuda::unavailable_reason()));
}

NcclGroup::~NcclGroup() = default;

void NcclGroup::allreduce_sum(const Array&, const Array&) {
  throw DeviceError(cat("NCCL allreduce: ", kusari::cuda::unavailable_reason()));
}

int NcclGroup::device() const { return -1; }

}  // namespace kusari::kernels::cuda
