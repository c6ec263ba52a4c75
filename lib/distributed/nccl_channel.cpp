// The NCCL channel of a communicator (detail/nccl_channel.h), in a build with the CUDA backend.

#include <kusari/distributed/detail/nccl_channel.h>

#include <nccl.h>

#include <kusari/core/error.h>
#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/streams.h>

namespace kusari::distributed {
namespace {

namespace cuda = kusari::kernels::cuda;

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

}  // namespace

bool nccl_available() { return true; }

struct NcclChannel::State {
  ncclComm_t comm = nullptr;
  int device = 0;
};

NcclChannel::NcclChannel(MPI_Comm comm, int device) : state_(std::make_unique<State>()) {
  cuda::require_device(Device::cuda(device), "NCCL communicator");
  state_->device = device;
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  ncclUniqueId id{};
  // Every rank joins the broadcast, so that a rank whose id could not be made does not leave the
  // others waiting; the failure is reported after it, on that rank.
  const ncclResult_t made = rank == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
  check_mpi(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm), "MPI_Bcast (NCCL unique id)");
  check_nccl(made, "ncclGetUniqueId");
  const cuda::DeviceGuard guard(device);
  check_nccl(ncclCommInitRank(&state_->comm, size, id, rank), "ncclCommInitRank");
}

NcclChannel::~NcclChannel() {
  if (state_ && state_->comm) ncclCommDestroy(state_->comm);
}

void NcclChannel::allreduce_sum(void* buffer, int64_t count, Dtype dtype) {
  const int device = state_->device;
  const cuda::DeviceGuard guard(device);
  const cudaStream_t communication = cuda::communication_stream(device), compute = cuda::compute_stream(device);
  cuda::order_after(communication, device, compute);
  check_nccl(ncclAllReduce(buffer, buffer, static_cast<size_t>(count), nccl_type(dtype), ncclSum, state_->comm,
                           communication),
             "ncclAllReduce");
  cuda::order_after(compute, device, communication);
}

int NcclChannel::device() const { return state_->device; }

}  // namespace kusari::distributed
