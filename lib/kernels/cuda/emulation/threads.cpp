// The host emulation's threads: one fiber per thread of a block, run in order until each waits or
// returns; a barrier is released once every live thread it concerns waits at the same call (a block's
// returned threads count as arrived at __syncthreads, as on the GPU; a warp's do not at a shuffle). Each
// fiber's stack is entered once through ucontext and then runs one thread after another; switches are
// _setjmp/_longjmp between the stacks, which save no signal mask (no system call per switch). Blocks run
// their threads in ascending and descending order by turns (across launches too), so that a read of
// another thread's shared-memory write without a barrier between them is wrong in one or the other.
// Nothing depends on a launch's cleanup after an error: the next launch enters afresh every fiber that
// was left mid-thread.

// glibc's checked longjmp (_FORTIFY_SOURCE) refuses a jump onto another stack, which each switch is.
#undef _FORTIFY_SOURCE

#include <kusari/kernels/cuda/detail/emulated_memory.h>
#include <kusari/kernels/cuda/detail/emulated_streams.h>
#include <kusari/kernels/cuda/detail/emulated_threads.h>
#include <kusari/kernels/cuda/detail/emulated_traffic.h>

#include <unistd.h>

#include <sys/mman.h>
#include <ucontext.h>

#include <csetjmp>
#include <cstring>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <kusari/core/error.h>

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

namespace kusari::kernels::cuda::emulation {
namespace {

// Each thread's stack (kernels' frames are small; an unoptimized build's are larger).
constexpr size_t kStackBytes = size_t{256} << 10;
constexpr int kWarpSize = 32;

// The guard below each stack: one page.
size_t guard_bytes() {
  static const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Where a fiber is: `abandoned` when the emulation refused what it did (never resumed).
enum class State { runnable, at_block_barrier, at_warp_barrier, returned, abandoned };

// One thread of the running block, on its own stack.
struct Fiber {
  jmp_buf resume;  // where this fiber goes on: in a wait, or parked after its last thread returned
  State state = State::runnable;
  bool started = false;  // its stack runs worker_main, parked between threads (else entered afresh)
  CallSite waits_at;     // the __syncthreads or shuffle it waits at
};

// The block this OS thread runs, and the stacks its fibers use (kept for the OS thread's life).
struct Block {
  jmp_buf scheduler;  // where a fiber gives its turn back
  ucontext_t entry;   // a fresh fiber's start
  std::vector<Fiber> fibers;
  std::vector<char*> stacks;
  std::vector<uint64_t> slots;  // each thread's value in a shuffle
  int current = 0;
  const std::function<void()>* thread = nullptr;  // the running launch's body
  bool descending = false;    // the next block's order
  std::exception_ptr thrown;  // what a thread's code threw
  std::string misuse;         // what the emulation refused (a deadlock, a shuffle it cannot give)
  std::vector<void*> fresh;   // the shared arrays this block has filled with garbage

  ~Block() {
    for (char* stack : stacks) munmap(stack, kStackBytes + guard_bytes());
  }
};

thread_local Block running;

// Gives the running fiber's turn back to the scheduler, waiting in `state`. The switches are functions of
// their own, never inlined: a _longjmp restores the callee-saved registers as they were at its _setjmp,
// which only a frame holding nothing else across the jump can take.
[[gnu::noinline]] void wait(State state) {
  Block& b = running;
  Fiber& f = b.fibers[static_cast<size_t>(b.current)];
  f.state = state;
  if (_setjmp(f.resume) == 0) _longjmp(b.scheduler, 1);
}

// A fiber's stack: runs the thread the scheduler starts on it, then parks until it starts the next.
void worker_main() {
  Block& b = running;
  for (;;) {
    try {
      (*b.thread)();
    } catch (...) {
      b.thrown = std::current_exception();
    }
    wait(State::returned);
  }
}

// Runs fiber t until it waits or returns.
[[gnu::noinline]] void switch_to(Block& b, int t) {
  Fiber& f = b.fibers[static_cast<size_t>(t)];
  if (_setjmp(b.scheduler) != 0) return;
  if (f.started) _longjmp(f.resume, 1);
  f.started = true;
  getcontext(&b.entry);
  b.entry.uc_stack.ss_sp = b.stacks[static_cast<size_t>(t)] + guard_bytes();
  b.entry.uc_stack.ss_size = kStackBytes;
  b.entry.uc_link = nullptr;
  makecontext(&b.entry, worker_main, 0);
  setcontext(&b.entry);
}

// Ends the launch with `message` (the fiber is never resumed: its stack is entered afresh next time).
[[noreturn]] void refuse(std::string message) {
  Block& b = running;
  if (b.misuse.empty()) b.misuse = std::move(message);
  wait(State::abandoned);
  std::abort();
}

// Whether the caller runs on the stack of the fiber the scheduler last switched to, the only one that
// can be running (inside a kernel).
bool inside_fiber(const Block& b) {
  if (static_cast<size_t>(b.current) >= b.stacks.size()) return false;
  const auto* here = static_cast<const char*>(__builtin_frame_address(0));
  const char* stack = b.stacks[static_cast<size_t>(b.current)];
  return here >= stack && here < stack + guard_bytes() + kStackBytes;
}

// The running fiber, after checking that there is one: DeviceError naming `what` (a __syncthreads or
// shuffle called outside a kernel) otherwise.
Fiber& running_fiber(Block& b, const char* what) {
  if (!inside_fiber(b)) throw DeviceError(cat("CUDA emulation: ", what, " called outside a kernel"));
  return b.fibers[static_cast<size_t>(b.current)];
}

// Makes sure this OS thread has `n` stacks, each with a guard page below it.
void reserve_stacks(Block& b, size_t n) {
  while (b.stacks.size() < n) {
    const size_t bytes = kStackBytes + guard_bytes();
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                        -1, 0);
    if (memory == MAP_FAILED) {
      throw DeviceError(cat("CUDA emulation: no memory for a thread's stack of ", kStackBytes, " bytes"));
    }
    if (mprotect(memory, guard_bytes(), PROT_NONE) != 0) {
      munmap(memory, bytes);
      throw DeviceError("CUDA emulation: a thread's stack could not be given its guard page");
    }
    b.stacks.push_back(static_cast<char*>(memory));
  }
  b.fibers.resize(n);
  b.slots.resize(n);
}

// Sets threadIdx for thread t of the block.
void enter_position(int t) {
  const auto linear = static_cast<unsigned>(t);
  threadIdx = {linear % blockDim.x, linear / blockDim.x % blockDim.y, linear / (blockDim.x * blockDim.y)};
}

// Lets the waiting threads go on where a barrier is complete; false when every thread has returned or
// none can go on (then `misuse` says why).
bool release(Block& b, int n) {
  int returned = 0, at_warp = 0;
  for (int t = 0; t < n; ++t) {
    returned += b.fibers[t].state == State::returned;
    at_warp += b.fibers[t].state == State::at_warp_barrier;
  }
  if (returned == n) return false;
  if (at_warp == 0) {
    const Fiber* first = nullptr;
    for (int t = 0; t < n; ++t) {
      Fiber& f = b.fibers[t];
      if (f.state != State::at_block_barrier) continue;
      if (first == nullptr) first = &f;
      if (!(f.waits_at == first->waits_at)) {
        const int other = static_cast<int>(first - b.fibers.data());
        b.misuse = cat("threads wait at different __syncthreads: thread ", other, " at ", first->waits_at.where(),
                       ", thread ", t, " at ", f.waits_at.where());
        return false;
      }
    }
    for (int t = 0; t < n; ++t) {
      if (b.fibers[t].state == State::at_block_barrier) b.fibers[t].state = State::runnable;
    }
    return true;
  }
  bool released = false;
  for (int base = 0; base < n; base += kWarpSize) {
    const int end = std::min(n, base + kWarpSize);
    int waiting = 0, gone = 0;
    const Fiber* first = nullptr;
    for (int t = base; t < end; ++t) {
      const Fiber& f = b.fibers[t];
      waiting += f.state == State::at_warp_barrier;
      gone += f.state == State::returned;
      if (f.state != State::at_warp_barrier) continue;
      if (first == nullptr) first = &f;
      if (!(f.waits_at == first->waits_at)) {
        b.misuse = cat("lanes of warp ", base / kWarpSize, " shuffle at different calls: ", first->waits_at.where(),
                       " and ", f.waits_at.where());
        return false;
      }
    }
    if (waiting == 0 || waiting + gone < end - base) continue;
    if (gone > 0) {
      b.misuse = cat("a shuffle of warp ", base / kWarpSize, " waits for ", gone, " of its lanes, which have returned");
      return false;
    }
    for (int t = base; t < end; ++t) b.fibers[t].state = State::runnable;
    released = true;
  }
  if (!released) {
    b.misuse = cat("the block's threads wait for one another for ever: ", n - returned - at_warp,
                   " at __syncthreads, ", at_warp, " at a warp shuffle some of whose lanes wait at __syncthreads");
  }
  return released;
}

// Runs every thread of the block at blockIdx until all have returned, or a thread throws or misuses;
// `descending`: the highest-numbered thread first.
void run_block(Block& b, int n, bool descending) {
  for (int t = 0; t < n; ++t) b.fibers[static_cast<size_t>(t)].state = State::runnable;
  b.fresh.clear();
  for (;;) {
    for (int i = 0; i < n; ++i) {
      const int t = descending ? n - 1 - i : i;
      if (b.fibers[static_cast<size_t>(t)].state != State::runnable) continue;
      b.current = t;
      enter_position(t);
      switch_to(b, t);
      if (b.thrown || !b.misuse.empty()) return;
    }
    if (!release(b, n)) return;
  }
}

// Whether CUDA launches this shape (at most 1,024 threads a block, 64 deep; grids up to 2^31 - 1 wide,
// 65,535 high and deep).
bool launchable(dim3 grid, dim3 block) {
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  return threads >= 1 && threads <= 1024 && block.z <= 64 && grid.x >= 1 && grid.y >= 1 && grid.z >= 1 &&
         grid.x <= 0x7fffffffu && grid.y <= 65535 && grid.z <= 65535;
}

// Runs every block of the launch, as queued by run_grid (recording its traffic where that is asked for).
void run_blocks(const void* kernel, dim3 grid, dim3 block, const std::function<void()>& thread) {
  Block& b = running;
  // Fibers an earlier launch left mid-thread (it failed) are entered afresh.
  for (Fiber& f : b.fibers) f.started = f.started && f.state == State::returned;
  const int n = static_cast<int>(block.x * block.y * block.z);
  reserve_stacks(b, static_cast<size_t>(n));
  b.thread = &thread;
  b.thrown = nullptr;
  b.misuse.clear();
  gridDim = grid;
  blockDim = block;
  traffic_begin_launch(kernel);
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = {x, y, z};
        run_block(b, n, b.descending);
        b.descending = !b.descending;
        traffic_end_block();
        if (b.thrown || !b.misuse.empty()) {
          traffic_abandon_launch();
          if (b.thrown) std::rethrow_exception(b.thrown);
          throw DeviceError(cat("CUDA emulation: in block (", x, ", ", y, ", ", z, ") of a grid of (", grid.x, ", ",
                                grid.y, ", ", grid.z, ") blocks of (", block.x, ", ", block.y, ", ", block.z,
                                ") threads: ", b.misuse));
        }
      }
    }
  }
  traffic_end_launch();
}

}  // namespace

void fault_in_kernel(std::string why) {
  if (inside_fiber(running)) refuse(std::move(why));
}

void run_grid(const void* kernel, dim3 grid, dim3 block, cudaStream_t stream, std::function<void()> thread) {
  if (!launchable(grid, block)) {
    fail(cudaErrorInvalidConfiguration);
    return;
  }
  if (inside_fiber(running)) throw DeviceError("CUDA emulation: a kernel launched from inside a kernel");
  enqueue(stream, [kernel, grid, block, thread = std::move(thread)] {
    keep_fault_report();
    run_blocks(kernel, grid, block, thread);
  });
}

std::string CallSite::where() const { return cat(file, ":", line, ":", column); }

bool CallSite::operator==(const CallSite& other) const {
  return line == other.line && column == other.column && std::strcmp(file, other.file) == 0;
}

void fresh_in_each_block(void* array, size_t bytes) {
  Block& b = running;
  if (std::find(b.fresh.begin(), b.fresh.end(), array) != b.fresh.end()) return;
  std::memset(array, 0xff, bytes);
  b.fresh.push_back(array);
}

void block_barrier(const CallSite& site) {
  Block& b = running;
  running_fiber(b, "__syncthreads").waits_at = site;
  wait(State::at_block_barrier);
}

uint64_t warp_exchange_xor(unsigned member_mask, uint64_t value, int lane_mask, int width, const CallSite& site) {
  Block& b = running;
  running_fiber(b, "__shfl_xor_sync").waits_at = site;
  const int t = b.current, n = static_cast<int>(b.fibers.size());
  const int base = t - t % kWarpSize, lanes = std::min(kWarpSize, n - base);
  const unsigned whole = lanes == kWarpSize ? 0xffffffffu : (1u << lanes) - 1;
  if (width != kWarpSize || member_mask != whole) {
    refuse(cat("__shfl_xor_sync of width ", width, " and member mask ", member_mask,
               ": the emulation takes a whole warp's shuffles (width 32, mask ", whole, ")"));
  }
  const int partner = base + ((t - base) ^ lane_mask);
  if (lane_mask < 0 || lane_mask >= kWarpSize || partner >= n) {
    refuse(cat("__shfl_xor_sync with lane mask ", lane_mask, " from lane ", t - base, " of a warp of ", lanes,
               " lanes"));
  }
  b.slots[static_cast<size_t>(t)] = value;
  wait(State::at_warp_barrier);
  const uint64_t result = b.slots[static_cast<size_t>(partner)];
  wait(State::at_warp_barrier);  // every lane has read before any writes its next value
  return result;
}

}  // namespace kusari::kernels::cuda::emulation
