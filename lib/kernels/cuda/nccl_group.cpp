// The CUDA backend's NCCL communicator (detail/nccl_group.h).

#include <kusari/kernels/cuda/detail/nccl_group.h>

#include <nccl.h>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/allocator.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/streams.h>

namespace kusari::kernels::cuda {
namespace {

// Throws DeviceError "<what>: <NCCL's message>" unless result is ncclSuccess.
void check_nccl(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) throw DeviceError(cat(what, ": ", ncclGetErrorString(result)));
}

ncclDataType_t nccl_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32: return ncclFloat32;
    case Dtype::float16: return ncclFloat16;
    case Dtype::bfloat16: return ncclBfloat16;
    default: throw DtypeError(cat("NCCL allreduce: expected a float32, float16 or bfloat16 wire, got ", dtype));
  }
}

// What rank 0 broadcasts: whether it made the id, and the id.
struct Invitation {
  int made = 0;
  ncclUniqueId id{};
};

}  // namespace

bool nccl_available() { return true; }

struct NcclGroup::State {
  ncclComm_t comm = nullptr;
  int device = 0;
};

NcclGroup::NcclGroup(int rank, int size, int device, const std::function<void(void*, size_t)>& broadcast)
    : state_(std::make_unique<State>()) {
  state_->device = device;
  Invitation invitation;
  ncclResult_t made = ncclSuccess;
  if (rank == 0) {
    made = ncclGetUniqueId(&invitation.id);
    invitation.made = made == ncclSuccess;
  }
  broadcast(&invitation, sizeof(invitation));  // every rank takes part, so none is left waiting
  if (!invitation.made) {
    throw DeviceError(cat("ncclGetUniqueId on rank 0: ",
                          rank == 0 ? ncclGetErrorString(made) : "failed (rank 0 reports why)"));
  }
  const DeviceGuard guard(device);
  check_nccl(ncclCommInitRank(&state_->comm, size, invitation.id, rank), "ncclCommInitRank");
}

NcclGroup::~NcclGroup() {
  if (!state_ || !state_->comm) return;
  const DeviceGuard guard(state_->device);
  ncclCommDestroy(state_->comm);
}

void NcclGroup::allreduce_sum(const Array& sent, const Array& received) {
  const int device = state_->device;
  for (const Array* a : {&sent, &received}) {
    if (!(a->device() == Device::cuda(device)) || !a->is_contiguous() || a->dtype() != sent.dtype()) {
      throw ValueError(cat("NCCL allreduce: expected contiguous ", sent.dtype(), " arrays on cuda:", device,
                           ", got a ", a->dtype(), " array on ", a->device()));
    }
  }
  if (sent.size() != received.size()) {
    throw ShapeError(cat("NCCL allreduce: expected arrays of one size, got ", sent.size(), " and ", received.size()));
  }
  const DeviceGuard guard(device);
  const cudaStream_t communication = communication_stream(device), compute = compute_stream(device);
  order_after(communication, device, compute);
  check_nccl(ncclAllReduce(sent.raw_data(), received.raw_data(), static_cast<size_t>(sent.size()),
                           nccl_type(sent.dtype()), ncclSum, state_->comm, communication),
             "ncclAllReduce");
  // Their blocks are not reused before the all-reduce is done, whatever waits on the compute stream.
  mark_used_on(sent, communication);
  mark_used_on(received, communication);
  order_after(compute, device, communication);
}

int NcclGroup::device() const { return state_->device; }

}  // namespace kusari::kernels::cuda
