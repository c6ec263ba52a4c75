// The emulated device's memory: each cudaMalloc its own mapping of host pages, placed so that its end
// (rounded to cudaMalloc's 256 bytes) meets a page the process may not touch. A kernel, copy or emulated
// library call that reads or writes past an allocation stops there (SIGSEGV) after a line on stderr that
// names the allocation, where a GPU would read a neighbouring block's bytes or write over them. The bytes
// between the allocation's end and that rounding hold a pattern checked when it is freed: a write there
// ends the process too, naming the allocation and the first byte changed.

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <kusari/kernels/cuda/detail/emulated_memory.h>

namespace kusari::kernels::cuda::emulation {
namespace {

// What the bytes past an allocation's end, up to the alignment, hold until it is freed.
constexpr unsigned char kPastEnd = 0xcd;

// One allocation: its mapping and the bytes asked for.
struct Mapping {
  char* base;
  size_t length;
  char* data;
  size_t bytes;
};

// The live allocations by the first byte of their guard page, and the SIGSEGV action before ours.
struct Guards {
  std::mutex mutex;
  std::map<const char*, Mapping> by_guard;
  struct sigaction previous {};
};

Guards& guards() {
  static auto* g = new Guards();  // never destroyed: a fault may come while static objects are torn down
  return *g;
}

size_t page_bytes() {
  static const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

size_t round_up(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

// On SIGSEGV: where the faulting address lies in an allocation's guard page, says which allocation and
// how far past its end; then puts the previous action back, so that the access, made again on return,
// ends the process as it would have (a SIGSEGV sent by kill or raise is raised again under it).
void report_fault(int, siginfo_t* info, void*) {
  Guards& g = guards();
  struct sigaction previous {};
  bool locked = false;
  for (int attempt = 0; attempt < 1000 && !(locked = g.mutex.try_lock()); ++attempt) sched_yield();
  if (locked) {  // else another thread holds the table for good (a fault inside its own code): no report
    previous = g.previous;
    const auto* address = static_cast<const char*>(info->si_addr);
    auto found = g.by_guard.upper_bound(address);
    if (info->si_code > 0 && found != g.by_guard.begin()) {
      --found;
      if (address < found->first + page_bytes()) {
        const Mapping& m = found->second;
        char line[256];
        const int n = std::snprintf(line, sizeof line,
                                    "kusari (CUDA emulation): an access at byte %zu of a device allocation of %zu "
                                    "bytes at %p, past its end\n",
                                    static_cast<size_t>(address - m.data), m.bytes, static_cast<void*>(m.data));
        if (n > 0) (void)!write(STDERR_FILENO, line, static_cast<size_t>(n));
      }
    }
    g.mutex.unlock();
  }
  sigaction(SIGSEGV, &previous, nullptr);
  if (info->si_code <= 0) raise(SIGSEGV);
}

}  // namespace

void keep_fault_report() {
  struct sigaction current {};
  sigaction(SIGSEGV, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == report_fault) return;
  struct sigaction action {};
  action.sa_sigaction = report_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;  // on the alternate stack where one is set: a stack overflow too
  sigemptyset(&action.sa_mask);
  const std::lock_guard lock(guards().mutex);
  guards().previous = current;
  sigaction(SIGSEGV, &action, nullptr);
}

void* guarded_allocate(size_t bytes) {
  keep_fault_report();
  const size_t page = page_bytes(), used = round_up(bytes, kAllocationAlignment), data_pages = round_up(used, page);
  const size_t length = data_pages + page;
  void* mapped = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char* base = static_cast<char*>(mapped);
  char* guard = base + data_pages;
  if (mapped == MAP_FAILED || mprotect(guard, page, PROT_NONE) != 0) {
    std::fprintf(stderr, "kusari (CUDA emulation): mapping %zu bytes for a device allocation failed: %s (each live "
                 "allocation takes two of the process's vm.max_map_count mappings)\n", length, std::strerror(errno));
    if (mapped != MAP_FAILED) munmap(base, length);
    return nullptr;
  }
  char* data = guard - used;
  std::memset(data + bytes, kPastEnd, used - bytes);
  Guards& g = guards();
  const std::lock_guard lock(g.mutex);
  g.by_guard[guard] = Mapping{base, length, data, bytes};
  return data;
}

void guarded_release(void* data, size_t bytes) {
  Guards& g = guards();
  Mapping m{};
  const char* rounded_end = static_cast<const char*>(data) + round_up(bytes, kAllocationAlignment);  // the guard
  {
    const std::lock_guard lock(g.mutex);
    const auto found = g.by_guard.find(rounded_end);
    if (found == g.by_guard.end()) return;
    m = found->second;
    g.by_guard.erase(found);
  }
  const char* end = m.data + m.bytes;
  const char* changed =
      std::find_if(end, rounded_end, [](char c) { return static_cast<unsigned char>(c) != kPastEnd; });
  if (changed != rounded_end) {
    std::fprintf(stderr,
                 "kusari (CUDA emulation): a write at byte %zu of a device allocation of %zu bytes at %p, past "
                 "its end (found when it was freed)\n",
                 static_cast<size_t>(changed - m.data), m.bytes, static_cast<void*>(m.data));
    std::abort();
  }
  munmap(m.base, m.length);
}

}  // namespace kusari::kernels::cuda::emulation
