// The CUDA backend's NCCL communicator (detail/nccl_group.h).

#include <kusari/kernels/cuda/detail/nccl_group.h>

#include <nccl.h>

#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/allocator.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/collective_watch.h>
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
    default: throw DtypeError(cat("NCCL: expected float32, float16 or bfloat16 arrays, got ", dtype));
  }
}

// What rank 0 broadcasts: whether it made the id, and the id.
struct Invitation {
  int made = 0;
  ncclUniqueId id{};
};

// Throws unless every array is contiguous, of `sent`'s dtype and on `device`.
void require_operands(std::initializer_list<const Array*> arrays, int device, const char* what) {
  const Array& first = **arrays.begin();
  for (const Array* a : arrays) {
    if (!(a->device() == Device::cuda(device)) || !a->is_contiguous() || a->dtype() != first.dtype()) {
      throw ValueError(cat(what, ": expected contiguous ", first.dtype(), " arrays on cuda:", device, ", got a ",
                           a->dtype(), " array on ", a->device()));
    }
  }
}

// Throws ShapeError unless `got` elements are the `expected` the collective needs.
void require_size(int64_t got, int64_t expected, const char* what, const char* which) {
  if (got != expected) throw ShapeError(cat(what, ": expected ", expected, " elements in ", which, ", got ", got));
}

// Asks `watch` to follow the collective just queued on `stream` until it completes on the device. A
// failure to record its event only leaves it unwatched (said on stderr): the collective itself is queued.
void watch_completion(CollectiveWatch& watch, cudaStream_t stream, std::string what) {
  if (!watch.watching()) return;
  cudaEvent_t event;
  if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
    std::fprintf(stderr, "kusari: %s is not watched: cudaEventCreateWithFlags failed\n", what.c_str());
    cudaGetLastError();
    return;
  }
  std::shared_ptr<void> owned(event, [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); });
  if (cudaEventRecord(event, stream) != cudaSuccess) {
    std::fprintf(stderr, "kusari: %s is not watched: cudaEventRecord failed\n", what.c_str());
    cudaGetLastError();
    return;
  }
  // cudaEventQuery needs no current device; an error there (a failed device) ends the wait as well.
  watch.add(std::move(what), [owned] {
    const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(owned.get()));
    if (status != cudaSuccess) cudaGetLastError();  // the watch thread's own error state
    return status != cudaErrorNotReady;
  });
}

// Queues `call` (one NCCL collective over `arrays`) on device's communication stream, in order with the
// caller's stream, under `watch`.
void enqueue(int device, int ranks, CollectiveWatch& watch, std::initializer_list<const Array*> arrays,
             const char* what, const std::function<ncclResult_t(cudaStream_t)>& call) {
  const DeviceGuard guard(device);
  const cudaStream_t communication = communication_stream(device), caller = current_stream(device);
  // Inside a CommunicationStreamScope the caller's work is already on the communication stream, and so is
  // what follows; otherwise the collective waits for the caller's stream and that stream for it.
  const bool on_caller_stream = caller == communication;
  if (!on_caller_stream) order_after(communication, device, caller);
  check_nccl(call(communication), what);
  // Their blocks are not reused before the collective is done, whatever stream they were allocated on.
  for (const Array* a : arrays) mark_used_on(*a, communication);
  // The watch's event before the caller's: a wait for the caller's stream then reaches it too.
  const Array& first = **arrays.begin();
  watch_completion(watch, communication,
                   cat(what, " of ", first.size(), " ", first.dtype(), " elements on cuda:", device, " (NCCL group of ",
                       ranks, " ranks)"));
  if (!on_caller_stream) order_after(caller, device, communication);
}

}  // namespace

bool nccl_available() { return true; }

struct NcclGroup::State {
  ncclComm_t comm = nullptr;
  int device = 0;
  int size = 0;
  std::unique_ptr<CollectiveWatch> watch;  // stopped before the communicator is destroyed
};

NcclGroup::NcclGroup(int rank, int size, int device, const std::function<void(void*, size_t)>& broadcast,
                     const WatchSettings& watch, const std::function<void(const std::string&)>& end_job)
    : state_(std::make_unique<State>()) {
  state_->device = device;
  state_->size = size;
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
  state_->watch = std::make_unique<CollectiveWatch>(watch, end_job);  // first: nothing to leak if it throws
  const DeviceGuard guard(device);
  check_nccl(ncclCommInitRank(&state_->comm, size, invitation.id, rank), "ncclCommInitRank");
}

NcclGroup::~NcclGroup() {
  if (!state_ || !state_->comm) return;
  state_->watch.reset();
  const DeviceGuard guard(state_->device);
  ncclCommDestroy(state_->comm);
}


void NcclGroup::allreduce(const Array& sent, const Array& received, int op) {
  constexpr const char* what = "ncclAllReduce";
  require_operands({&sent, &received}, state_->device, what);
  require_size(received.size(), sent.size(), what, "the result");
  enqueue(state_->device, state_->size, *state_->watch, {&sent, &received}, what, [&](cudaStream_t stream) {
    return ncclAllReduce(sent.raw_data(), received.raw_data(), static_cast<size_t>(sent.size()),
                         nccl_type(sent.dtype()), static_cast<ncclRedOp_t>(op), state_->comm, stream);
  });
}

void NcclGroup::allreduce_sum(const Array& sent, const Array& received) { allreduce(sent, received, ncclSum); }

void NcclGroup::allreduce_max(const Array& sent, const Array& received) { allreduce(sent, received, ncclMax); }

void NcclGroup::reduce_sum(const Array& sent, const Array& received, int root) {
  constexpr const char* what = "ncclReduce";
  require_operands({&sent, &received}, state_->device, what);
  require_size(received.size(), sent.size(), what, "the result");
  enqueue(state_->device, state_->size, *state_->watch, {&sent, &received}, what, [&](cudaStream_t stream) {
    return ncclReduce(sent.raw_data(), received.raw_data(), static_cast<size_t>(sent.size()),
                      nccl_type(sent.dtype()), ncclSum, root, state_->comm, stream);
  });
}

void NcclGroup::broadcast(const Array& array, int root) {
  constexpr const char* what = "ncclBroadcast";
  require_operands({&array}, state_->device, what);
  enqueue(state_->device, state_->size, *state_->watch, {&array}, what, [&](cudaStream_t stream) {
    return ncclBroadcast(array.raw_data(), array.raw_data(), static_cast<size_t>(array.size()),
                         nccl_type(array.dtype()), root, state_->comm, stream);
  });
}

void NcclGroup::reduce_scatter_sum(const Array& sent, const Array& received) {
  constexpr const char* what = "ncclReduceScatter";
  require_operands({&sent, &received}, state_->device, what);
  require_size(received.size() * state_->size, sent.size(), what, "the sent array (ranks times the slice)");
  enqueue(state_->device, state_->size, *state_->watch, {&sent, &received}, what, [&](cudaStream_t stream) {
    return ncclReduceScatter(sent.raw_data(), received.raw_data(), static_cast<size_t>(received.size()),
                             nccl_type(sent.dtype()), ncclSum, state_->comm, stream);
  });
}

void NcclGroup::allgather(const Array& sent, const Array& received) {
  constexpr const char* what = "ncclAllGather";
  require_operands({&sent, &received}, state_->device, what);
  require_size(received.size(), sent.size() * state_->size, what, "the result (ranks times the sent array)");
  enqueue(state_->device, state_->size, *state_->watch, {&sent, &received}, what, [&](cudaStream_t stream) {
    return ncclAllGather(sent.raw_data(), received.raw_data(), static_cast<size_t>(sent.size()),
                         nccl_type(sent.dtype()), state_->comm, stream);
  });
}

void NcclGroup::allreduce_sums_at_once(const std::vector<NcclGroup*>& groups, const std::vector<Array>& shares) {
  constexpr const char* what = "ncclAllReduce (groups at once)";
  if (groups.empty() || groups.size() != shares.size()) {
    throw ValueError(cat(what, ": expected one share per group, got ", groups.size(), " groups and ", shares.size(),
                         " shares"));
  }
  const int device = groups[0]->state_->device;
  std::vector<ncclDataType_t> types;
  for (size_t i = 0; i < groups.size(); ++i) {
    require_operands({&shares[i]}, device, what);
    if (groups[i]->state_->device != device) {
      throw ValueError(cat(what, ": expected groups of cuda:", device, ", got one of cuda:", groups[i]->state_->device));
    }
    types.push_back(nccl_type(shares[i].dtype()));
  }
  const DeviceGuard guard(device);
  const cudaStream_t caller = current_stream(device);
  // Side streams live as long as the process, so a buffer freed after the groups still finds the stream
  // it was used on.
  std::vector<cudaStream_t> streams;
  for (size_t i = 0; i < groups.size(); ++i) {
    streams.push_back(side_stream(device, static_cast<int>(i)));
    order_after(streams.back(), device, caller);
  }
  // One group call: NCCL launches the communicators' collectives together, so no rank waits in one
  // communicator's kernel for a peer still queued behind another's.
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  ncclResult_t queued = ncclSuccess;
  for (size_t i = 0; i < groups.size() && queued == ncclSuccess; ++i) {
    queued = ncclAllReduce(shares[i].raw_data(), shares[i].raw_data(), static_cast<size_t>(shares[i].size()), types[i],
                           ncclSum, groups[i]->state_->comm, streams[i]);
  }
  const ncclResult_t launched = ncclGroupEnd();
  check_nccl(queued, what);
  check_nccl(launched, "ncclGroupEnd");
  for (size_t i = 0; i < groups.size(); ++i) {
    State& state = *groups[i]->state_;
    mark_used_on(shares[i], streams[i]);
    watch_completion(*state.watch, streams[i],
                     cat(what, " of ", shares[i].size(), " ", shares[i].dtype(), " elements on cuda:", device,
                         " (NCCL group ", i, " of ", groups.size(), ", ", state.size, " ranks)"));
    order_after(caller, device, streams[i]);
  }
}

int NcclGroup::device() const { return state_->device; }

int NcclGroup::size() const { return state_->size; }

}  // namespace kusari::kernels::cuda
