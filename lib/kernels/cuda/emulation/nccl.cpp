// NCCL's collectives for the host emulation (meson option cuda-emulation), linked in place of libnccl:
// the calls the backend's NcclGroup makes, between the processes of one machine through a shared-memory
// segment per communicator. ncclGetUniqueId names the segment; each member opens it in ncclCommInitRank.
// A collective runs when it is called (or at ncclGroupEnd, in call order), after the work queued on its
// stream before it (detail/emulated_streams.h), so it reads what it would read on a GPU; its result is
// written by a copy queued on that stream, so it is there for the stream's later work and for what waits
// for the stream, not before. It moves the buffers through the segment in parts, each rank writing its
// part into its own slot and reading every slot after a barrier, sums added in rank order with each
// partial sum rounded to the element type (NCCL's order depends on its algorithm).
// Members calling different collectives on one communicator are refused on every member (a GPU would
// hang or mix them up), and a member process that has ended fails the collective with ncclRemoteError
// instead of a hang. Collectives on different communicators must come in one order on every member
// (kusari's do), grouped ones too: the emulation runs a group's calls one after another.

#include <nccl.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <kusari/kernels/cuda/detail/emulated_streams.h>

namespace {

// The most ranks a communicator has in the emulation, and the bytes each rank's slot holds.
constexpr int kMaxRanks = 256;
constexpr size_t kSlotBytes = size_t{1} << 20;

// The collective a rank is in, which every rank must agree on.
struct Call {
  int32_t kind = 0;  // the Kind below
  int32_t type = 0;
  int32_t op = 0;
  int32_t root = 0;
  uint64_t count = 0;
  bool operator==(const Call&) const = default;
};

enum Kind : int32_t { kAllReduce = 1, kReduce, kBroadcast, kReduceScatter, kAllGather };

// The start of a communicator's segment; the ranks' slots follow it.
struct Header {
  uint64_t joined;      // members that opened the segment
  uint64_t arrived;     // members at the current barrier
  uint64_t generation;  // barriers completed
  int32_t pids[kMaxRanks];
  Call calls[kMaxRanks];
};

// The bytes of a communicator's segment.
size_t segment_bytes(int ranks) { return sizeof(Header) + static_cast<size_t>(ranks) * kSlotBytes; }

}  // namespace

// A member's view of a communicator.
struct ncclComm {
  int rank = 0, ranks = 0;
  Header* header = nullptr;
  char* slots = nullptr;
  uint64_t barriers = 0;  // the barriers this member has passed
};

namespace {

// What ncclGroupStart deferred until ncclGroupEnd.
thread_local int group_depth = 0;
thread_local std::vector<std::function<ncclResult_t()>> grouped;

static_assert(std::atomic_ref<uint64_t>::is_always_lock_free, "the segment's counters are shared between processes");

// A counter of the segment, as an atomic.
std::atomic_ref<uint64_t> shared(uint64_t& word) { return std::atomic_ref<uint64_t>(word); }

// Whether process `pid` runs: it exists and has not ended (an ended child its parent has not yet waited
// for still exists, as a zombie).
bool running(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (stat == nullptr) return true;  // no /proc: existing is all that is known
  char line[512] = {};
  const bool read = std::fgets(line, sizeof line, stat) != nullptr;
  std::fclose(stat);
  // "pid (name) state ...": the name may hold a parenthesis, so the state follows the last one.
  const char* name_end = read ? std::strrchr(line, ')') : nullptr;
  if (name_end == nullptr || name_end[1] == '\0') return true;
  const char state = name_end[2];
  return state != 'Z' && state != 'X';
}

// Whether every other member's process still runs.
bool members_alive(const ncclComm& c) {
  for (int r = 0; r < c.ranks; ++r) {
    if (r != c.rank && !running(c.header->pids[r])) return false;
  }
  return true;
}

// Waits until every member reaches this barrier; ncclRemoteError if a member's process ended meanwhile.
ncclResult_t barrier(ncclComm& c) {
  Header& h = *c.header;
  const uint64_t target = ++c.barriers;
  if (shared(h.arrived).fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint64_t>(c.ranks)) {
    shared(h.arrived).store(0, std::memory_order_relaxed);
    shared(h.generation).store(target, std::memory_order_release);
    return ncclSuccess;
  }
  auto checked = std::chrono::steady_clock::now();
  for (int spins = 0; shared(h.generation).load(std::memory_order_acquire) < target; ++spins) {
    if (spins < 64) {
      sched_yield();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (std::chrono::steady_clock::now() - checked > std::chrono::milliseconds(100)) {
      // A member that released the barrier and then ended (after the job's last collective) is no failure.
      if (!members_alive(c) && shared(h.generation).load(std::memory_order_acquire) < target) return ncclRemoteError;
      checked = std::chrono::steady_clock::now();
    }
  }
  return ncclSuccess;
}

// The bytes of an element of `type`; 0 for the types the backend never sends.
size_t element_bytes(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclFloat32: return 4;
    case ncclFloat64: return 8;
    default: return 0;
  }
}

// a ⊕ b in the element type: each partial result rounded to it, as a GPU's reduction stores it.
template <class T, class Wide>
T combine(T a, T b, ncclRedOp_t op) {
  const Wide x = static_cast<Wide>(a), y = static_cast<Wide>(b);
  return static_cast<T>(op == ncclSum ? x + y : std::fmax(x, y));
}

template <>
__half combine<__half, float>(__half a, __half b, ncclRedOp_t op) {
  const float x = __half2float(a), y = __half2float(b);
  return __float2half_rn(op == ncclSum ? x + y : std::fmax(x, y));
}

template <>
__nv_bfloat16 combine<__nv_bfloat16, float>(__nv_bfloat16 a, __nv_bfloat16 b, ncclRedOp_t op) {
  const float x = __bfloat162float(a), y = __bfloat162float(b);
  return __float2bfloat16_rn(op == ncclSum ? x + y : std::fmax(x, y));
}

// reduce_slots below for elements of type T, combined in Wide.
template <class T, class Wide>
void reduce_slots(const ncclComm& c, size_t offset, size_t n, void* out, ncclRedOp_t op) {
  auto* result = static_cast<T*>(out);
  for (size_t i = 0; i < n; ++i) {
    T acc = reinterpret_cast<const T*>(c.slots + offset)[i];
    for (int r = 1; r < c.ranks; ++r) {
      acc = combine<T, Wide>(acc, reinterpret_cast<const T*>(c.slots + r * kSlotBytes + offset)[i], op);
    }
    result[i] = acc;
  }
}

// out[i] = the members' slots' elements at `offset` combined in rank order, for n elements.
void reduce_slots(const ncclComm& c, size_t offset, size_t n, void* out, ncclDataType_t type, ncclRedOp_t op) {
  switch (type) {
    case ncclFloat16: reduce_slots<__half, float>(c, offset, n, out, op); break;
    case ncclBfloat16: reduce_slots<__nv_bfloat16, float>(c, offset, n, out, op); break;
    case ncclFloat32: reduce_slots<float, float>(c, offset, n, out, op); break;
    default: reduce_slots<double, double>(c, offset, n, out, op); break;
  }
}

// The first byte of `rank`'s slot.
char* slot(ncclComm& c, int rank) { return c.slots + static_cast<size_t>(rank) * kSlotBytes; }

// The bytes a collective gives this member.
size_t result_bytes(const ncclComm& c, const Call& call) {
  const size_t bytes = call.count * element_bytes(static_cast<ncclDataType_t>(call.type));
  if (call.kind == kAllGather) return bytes * static_cast<size_t>(c.ranks);
  return call.kind == kReduce && c.rank != call.root ? 0 : bytes;
}

// Runs one collective of `call` on the host into `received` (result_bytes of it): checks that every
// member calls the same, then moves the buffers part by part.
ncclResult_t run(ncclComm& c, const Call& call, const void* sent, void* received) {
  const auto type = static_cast<ncclDataType_t>(call.type);
  const auto op = static_cast<ncclRedOp_t>(call.op);
  const size_t bytes = element_bytes(type);
  c.header->calls[c.rank] = call;
  if (ncclResult_t r = barrier(c); r != ncclSuccess) return r;
  bool agreed = true;
  for (int r = 0; r < c.ranks; ++r) agreed = agreed && c.header->calls[r] == call;
  if (ncclResult_t r = barrier(c); r != ncclSuccess) return r;
  if (!agreed) {
    std::fprintf(stderr, "kusari NCCL emulation: rank %d of %d: the members call different collectives\n", c.rank,
                 c.ranks);
    return ncclInvalidUsage;
  }
  if (call.count == 0) return ncclSuccess;
  const auto* in = static_cast<const char*>(sent);
  auto* out = static_cast<char*>(received);
  const size_t count = call.count;
  // Elements per part: a whole part in each slot, or for a reduce-scatter one share per member.
  const size_t part = call.kind == kReduceScatter ? kSlotBytes / bytes / c.ranks : kSlotBytes / bytes;
  for (size_t at = 0; at < count; at += part) {
    const size_t n = std::min(part, count - at);
    switch (call.kind) {
      case kAllReduce:
      case kReduce:
        std::memcpy(slot(c, c.rank), in + at * bytes, n * bytes);
        break;
      case kBroadcast:
        if (c.rank == call.root) std::memcpy(slot(c, c.rank), in + at * bytes, n * bytes);
        break;
      case kReduceScatter:
        for (int r = 0; r < c.ranks; ++r) {
          std::memcpy(slot(c, c.rank) + r * part * bytes, in + (r * count + at) * bytes, n * bytes);
        }
        break;
      default:
        std::memcpy(slot(c, c.rank), in + at * bytes, n * bytes);
        break;
    }
    if (ncclResult_t r = barrier(c); r != ncclSuccess) return r;
    switch (call.kind) {
      case kAllReduce: reduce_slots(c, 0, n, out + at * bytes, type, op); break;
      case kReduce:
        if (c.rank == call.root) reduce_slots(c, 0, n, out + at * bytes, type, op);
        break;
      case kBroadcast: std::memcpy(out + at * bytes, slot(c, call.root), n * bytes); break;
      case kReduceScatter: reduce_slots(c, c.rank * part * bytes, n, out + at * bytes, type, op); break;
      default:
        for (int r = 0; r < c.ranks; ++r) std::memcpy(out + (r * count + at) * bytes, slot(c, r), n * bytes);
        break;
    }
    if (ncclResult_t r = barrier(c); r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

// Queues (in a group) or runs one collective on `comm`, after the work queued on `stream` before it; its
// result reaches `received` by a copy queued on `stream`.
ncclResult_t collective(ncclComm_t comm, Call call, const void* sent, void* received, cudaStream_t stream) {
  if (comm == nullptr || element_bytes(static_cast<ncclDataType_t>(call.type)) == 0) return ncclInvalidArgument;
  if (call.op != ncclSum && call.op != ncclMax) return ncclInvalidArgument;
  if (call.root < 0 || call.root >= comm->ranks) return ncclInvalidArgument;
  auto go = [comm, call, sent, received, stream] {
    kusari::kernels::cuda::emulation::finish_stream(stream);
    const size_t bytes = result_bytes(*comm, call);
    auto result = std::make_shared<std::vector<char>>(bytes);
    const ncclResult_t ran = run(*comm, call, sent, result->data());
    if (ran == ncclSuccess && bytes > 0) {
      kusari::kernels::cuda::emulation::enqueue(stream, [received, result] {
        std::memcpy(received, result->data(), result->size());
      });
    }
    return ran;
  };
  if (group_depth > 0) {
    grouped.push_back(go);
    return ncclSuccess;
  }
  return go();
}

}  // namespace

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclSystemError: return "unhandled system error (NCCL emulation: a shared-memory segment)";
    case ncclInvalidArgument: return "invalid argument (NCCL emulation)";
    case ncclInvalidUsage:
      return "invalid usage (NCCL emulation: members calling different collectives, or a group ended unstarted)";
    case ncclRemoteError: return "remote process exited or there was a network error (NCCL emulation: a member ended)";
    default: return "internal error (NCCL emulation)";
  }
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  static std::atomic<unsigned> made{0};
  std::random_device random;
  const std::string name = "/kusari-nccl-" + std::to_string(getpid()) + "-" + std::to_string(made++) + "-" +
                           std::to_string(random());
  *id = ncclUniqueId{};
  std::memcpy(id->internal, name.c_str(), name.size() + 1);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int ranks, ncclUniqueId id, int rank) {
  *comm = nullptr;
  if (ranks < 1 || ranks > kMaxRanks || rank < 0 || rank >= ranks) return ncclInvalidArgument;
  id.internal[NCCL_UNIQUE_ID_BYTES - 1] = '\0';
  const int fd = shm_open(id.internal, O_CREAT | O_RDWR, 0600);
  if (fd < 0) return ncclSystemError;
  const size_t bytes = segment_bytes(ranks);
  void* memory = ftruncate(fd, static_cast<off_t>(bytes)) == 0
                     ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                     : MAP_FAILED;
  close(fd);
  if (memory == MAP_FAILED) {
    shm_unlink(id.internal);
    return ncclSystemError;
  }
  auto* c = new ncclComm{rank, ranks, static_cast<Header*>(memory), static_cast<char*>(memory) + sizeof(Header), 0};
  std::atomic_ref<int32_t>(c->header->pids[rank]).store(getpid(), std::memory_order_release);
  shared(c->header->joined).fetch_add(1, std::memory_order_acq_rel);
  // Every member opens the segment; one that joined and ended fails the others' wait.
  ncclResult_t joined = ncclSuccess;
  while (joined == ncclSuccess && shared(c->header->joined).load(std::memory_order_acquire) < uint64_t(ranks)) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    for (int r = 0; r < ranks; ++r) {
      const pid_t pid = std::atomic_ref<int32_t>(c->header->pids[r]).load(std::memory_order_acquire);
      if (r != rank && pid != 0 && !running(pid)) joined = ncclRemoteError;
    }
  }
  shm_unlink(id.internal);  // by every member (the later ones find it gone): no name outlives the start
  if (joined == ncclSuccess) joined = barrier(*c);
  if (joined != ncclSuccess) {
    munmap(memory, bytes);
    delete c;
    return joined;
  }
  *comm = c;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  munmap(comm->header, segment_bytes(comm->ranks));
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  ++group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (group_depth == 0) return ncclInvalidUsage;
  if (--group_depth > 0) return ncclSuccess;
  std::vector<std::function<ncclResult_t()>> calls;
  calls.swap(grouped);
  // Every call runs, so that the members of the other communicators are not left waiting; the first
  // failure is the group's.
  ncclResult_t result = ncclSuccess;
  for (const auto& call : calls) {
    const ncclResult_t r = call();
    if (result == ncclSuccess) result = r;
  }
  return result;
}

ncclResult_t ncclAllReduce(const void* sent, void* received, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, Call{kAllReduce, type, op, 0, count}, sent, received, stream);
}

ncclResult_t ncclReduce(const void* sent, void* received, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, Call{kReduce, type, op, root, count}, sent, received, stream);
}

ncclResult_t ncclBroadcast(const void* sent, void* received, size_t count, ncclDataType_t type, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, Call{kBroadcast, type, ncclSum, root, count}, sent, received, stream);
}

ncclResult_t ncclReduceScatter(const void* sent, void* received, size_t count, ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, Call{kReduceScatter, type, op, 0, count}, sent, received, stream);
}

ncclResult_t ncclAllGather(const void* sent, void* received, size_t count, ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  return collective(comm, Call{kAllGather, type, ncclSum, 0, count}, sent, received, stream);
}
