// The device-memory traffic of the emulated kernels (detail/emulated_traffic.h): the hooks the kernel
// sources' loads and stores call (GCC's -fsanitize=thread calls, defined here rather than by a
// sanitizer's runtime), the requests they make warp by warp, and the report KUSARI_EMULATED_TRAFFIC
// asks for. A launch runs on one OS thread, block after block, so each OS thread records its own launch and
// adds it to the process's tallies when it ends.

#include <kusari/kernels/cuda/detail/emulated_traffic.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/emulated_memory.h>
#include <kusari/kernels/cuda/detail/emulated_threads.h>

namespace kusari::kernels::cuda::emulation {
namespace {

constexpr uint64_t kSectorBytes = 32;
constexpr unsigned kWarpSize = 32;

// An instruction's n-th access by one lane (occurrence n), or by one warp (`lane` its warp's number).
struct Visit {
  const void* site;
  unsigned lane;
  uint32_t occurrence;
  bool operator==(const Visit&) const = default;
};

// Hashes a Visit.
struct VisitHash {
  size_t operator()(const Visit& v) const {
    uint64_t h = reinterpret_cast<uintptr_t>(v.site) * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t{v.lane} << 32 | v.occurrence) + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

// What one warp's lanes asked for at one instruction: each lane's [first, end) byte.
struct Request {
  bool store = false;
  std::vector<std::pair<uintptr_t, uintptr_t>> spans;
};

// The launch an OS thread records: the device's allocations when it began, each lane's count of each
// instruction, the requests of the running block, the launch's sectors and its instructions' tallies.
struct LaunchRecord {
  const void* kernel = nullptr;
  std::vector<std::pair<uintptr_t, uintptr_t>> device;  // [first, end) by address
  std::unordered_map<Visit, uint32_t, VisitHash> seen;     // occurrence = lane's count so far (lane, 0)
  std::unordered_map<Visit, Request, VisitHash> requests;  // by (site, warp, occurrence)
  std::unordered_set<uint64_t> read, written;
  std::unordered_map<const void*, SiteTraffic> sites;

  // Whether [address, address + bytes) lies in one device allocation.
  bool in_device(uintptr_t address, size_t bytes) const {
    auto after = std::upper_bound(device.begin(), device.end(), std::make_pair(address, UINTPTR_MAX));
    return after != device.begin() && address + bytes <= std::prev(after)->second;
  }

  // Puts one lane's access with its warp's request at the same instruction and occurrence.
  void note(uintptr_t address, size_t bytes, bool store, const void* site) {
    if (bytes == 0 || !in_device(address, bytes)) return;
    const unsigned lane = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const uint32_t occurrence = seen[{site, lane, 0}]++;
    Request& r = requests[{site, lane / kWarpSize, occurrence}];
    r.store = store;
    r.spans.emplace_back(address, address + bytes);
    for (uint64_t s = address / kSectorBytes; s <= (address + bytes - 1) / kSectorBytes; ++s) {
      (store ? written : read).insert(s);
    }
  }

  // Adds the running block's requests to their instructions' tallies: the bytes of a request's lanes'
  // spans, its sectors, and the sectors its distinct bytes would fill.
  void end_block() {
    for (auto& [visit, r] : requests) {
      SiteTraffic& s = sites[visit.site];
      s.site = visit.site;
      s.store = r.store;
      s.tally.accesses += r.spans.size();
      s.tally.requests += 1;
      std::sort(r.spans.begin(), r.spans.end());
      uint64_t next_byte = 0, next_sector = 0;  // the first byte and sector not yet counted (spans by start)
      uint64_t distinct_bytes = 0;
      for (const auto& [first, end] : r.spans) {
        s.tally.bytes += end - first;
        distinct_bytes += end > next_byte ? end - std::max<uint64_t>(first, next_byte) : 0;
        next_byte = std::max<uint64_t>(next_byte, end);
        const uint64_t end_sector = (end - 1) / kSectorBytes + 1;
        s.tally.sectors += end_sector > next_sector ? end_sector - std::max(first / kSectorBytes, next_sector) : 0;
        next_sector = std::max(next_sector, end_sector);
      }
      s.tally.least_sectors += (distinct_bytes + kSectorBytes - 1) / kSectorBytes;
    }
    requests.clear();
    seen.clear();
  }
};

// What the process has recorded, by kernel, and whether it records.
struct Recorded {
  std::mutex mutex;
  std::vector<KernelTraffic> kernels;
  std::unordered_map<const void*, size_t> kernel_index;
  std::vector<std::unordered_map<const void*, size_t>> site_index;  // by kernel, then by site
  std::atomic<bool> on{false};
};

Recorded& recorded() {
  static auto* r = new Recorded();  // never destroyed: the report is written at exit
  return *r;
}

thread_local std::unique_ptr<LaunchRecord> running_launch;
thread_local bool inside_hook = false;  // a hook's own code (library code the kernels share) is not traffic

// Records one access made by the running kernel's code at `site`.
void note(uintptr_t address, size_t bytes, bool store, const void* site) {
  LaunchRecord* launch = running_launch.get();
  if (launch == nullptr || inside_hook) return;
  inside_hook = true;
  struct Leave {
    ~Leave() { inside_hook = false; }
  } leave;
  launch->note(address, bytes, store, site);
}

// "{"object": "...", "offset": N}": where `address` lies, for addr2line (`minus` taken off a return
// address, to name the call before it).
std::string located(const void* address, uintptr_t minus) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) {
    return cat("{\"object\": \"\", \"offset\": ", reinterpret_cast<uintptr_t>(address), "}");
  }
  const uintptr_t offset = reinterpret_cast<uintptr_t>(address) - reinterpret_cast<uintptr_t>(info.dli_fbase) - minus;
  std::string object;
  for (const char* c = info.dli_fname; *c != '\0'; ++c) {
    if (*c == '"' || *c == '\\') object += '\\';
    object += *c;
  }
  return cat("{\"object\": \"", object, "\", \"offset\": ", offset, "}");
}

}  // namespace

void fail_misaligned(uintptr_t address, size_t bytes, size_t alignment, bool store, const void* site) {
  if (inside_hook) return;
  char hex[24];
  std::snprintf(hex, sizeof hex, "%#" PRIxPTR, address);
  fault_in_kernel(cat("a ", bytes, "-byte ", store ? "store" : "load", " at address ", hex, " is not aligned to ",
                      alignment, " bytes, which a GPU refuses (cudaErrorMisalignedAddress)",
                      site ? cat("; the instruction: ", located(site, 1)) : std::string()));
}

namespace {

// A hooked access of Size bytes at `a` by the instruction at `site`, noted after its alignment is checked.
// GCC hooks accesses whose types are aligned to their size, or to 8 bytes for 16 (a struct of two int64,
// which nvcc moves 8 bytes at a time); one that is not came from a pointer cast the caller did not check.
template <size_t Size>
inline void hooked(void* a, bool store, const void* site) {
  constexpr size_t alignment = Size < 8 ? Size : 8;
  const auto address = reinterpret_cast<uintptr_t>(a);
  if (address % alignment != 0) fail_misaligned(address, Size, alignment, store, site);
  note(address, Size, store, site);
}

// An AccessTally as JSON.
std::string json(const AccessTally& t) {
  return cat("{\"accesses\": ", t.accesses, ", \"requests\": ", t.requests, ", \"bytes\": ", t.bytes,
             ", \"sectors\": ", t.sectors, ", \"least_sectors\": ", t.least_sectors,
             ", \"distinct_sectors\": ", t.distinct_sectors, "}");
}

// Writes every kernel's traffic to KUSARI_EMULATED_TRAFFIC's file (through a temporary name).
void write_report() {
  const char* path = std::getenv("KUSARI_EMULATED_TRAFFIC");
  if (path == nullptr || *path == '\0') return;
  const std::string temporary = cat(path, ".tmp.", getpid());
  {
    std::ofstream out(temporary);
    out << "{\"sector_bytes\": " << kSectorBytes << ", \"kernels\": [";
    const std::vector<KernelTraffic> kernels = recorded_traffic();
    for (size_t k = 0; k < kernels.size(); ++k) {
      const KernelTraffic& t = kernels[k];
      out << (k ? ",\n" : "\n") << "{\"kernel\": " << located(t.kernel, 0) << ", \"launches\": " << t.launches
          << ", \"loads\": " << json(t.loads) << ", \"stores\": " << json(t.stores) << ", \"sites\": [";
      for (size_t s = 0; s < t.sites.size(); ++s) {
        out << (s ? ", " : "") << "{\"site\": " << located(t.sites[s].site, 1) << ", \"kind\": \""
            << (t.sites[s].store ? "store" : "load") << "\", \"tally\": " << json(t.sites[s].tally) << "}";
      }
      out << "]}";
    }
    out << "\n]}\n";
    if (!out.flush()) {
      std::fprintf(stderr, "kusari: KUSARI_EMULATED_TRAFFIC: could not write %s\n", temporary.c_str());
      return;
    }
  }
  if (std::rename(temporary.c_str(), path) != 0) {
    std::fprintf(stderr, "kusari: KUSARI_EMULATED_TRAFFIC: could not rename %s to %s\n", temporary.c_str(), path);
  }
}

// Starts recording, with the report at exit, where KUSARI_EMULATED_TRAFFIC names a file (once).
void read_environment() {
  static const bool asked = [] {
    const char* path = std::getenv("KUSARI_EMULATED_TRAFFIC");
    if (path == nullptr || *path == '\0') return false;
    record_traffic(true);
    std::atexit(write_report);
    return true;
  }();
  (void)asked;
}

}  // namespace

AccessTally& AccessTally::operator+=(const AccessTally& other) {
  accesses += other.accesses;
  requests += other.requests;
  bytes += other.bytes;
  sectors += other.sectors;
  least_sectors += other.least_sectors;
  distinct_sectors += other.distinct_sectors;
  return *this;
}

void record_traffic(bool on) { recorded().on = on; }

std::vector<KernelTraffic> recorded_traffic() {
  Recorded& r = recorded();
  const std::lock_guard lock(r.mutex);
  return r.kernels;
}

void clear_recorded_traffic() {
  Recorded& r = recorded();
  const std::lock_guard lock(r.mutex);
  r.kernels.clear();
  r.kernel_index.clear();
  r.site_index.clear();
}

void traffic_begin_launch(const void* kernel) {
  read_environment();
  if (!recorded().on) return;
  auto launch = std::make_unique<LaunchRecord>();
  launch->kernel = kernel;
  for (const auto& [first, bytes] : device_allocations()) {
    launch->device.emplace_back(reinterpret_cast<uintptr_t>(first), reinterpret_cast<uintptr_t>(first) + bytes);
  }
  running_launch = std::move(launch);
}

void traffic_abandon_launch() { running_launch.reset(); }

void traffic_end_block() {
  if (running_launch) running_launch->end_block();
}

void traffic_end_launch() {
  std::unique_ptr<LaunchRecord> launch = std::move(running_launch);
  if (!launch) return;
  Recorded& r = recorded();
  const std::lock_guard lock(r.mutex);
  const auto [at, added] = r.kernel_index.try_emplace(launch->kernel, r.kernels.size());
  if (added) {
    r.kernels.emplace_back().kernel = launch->kernel;
    r.site_index.emplace_back();
  }
  KernelTraffic& k = r.kernels[at->second];
  ++k.launches;
  k.loads.distinct_sectors += launch->read.size();
  k.stores.distinct_sectors += launch->written.size();
  for (const auto& [site, traffic] : launch->sites) {
    (traffic.store ? k.stores : k.loads) += traffic.tally;
    const auto [s, new_site] = r.site_index[at->second].try_emplace(site, k.sites.size());
    if (new_site) k.sites.push_back(SiteTraffic{site, traffic.store, AccessTally{}});
    k.sites[s->second].tally += traffic.tally;
  }
}

}  // namespace kusari::kernels::cuda::emulation

using kusari::kernels::cuda::emulation::hooked;
using kusari::kernels::cuda::emulation::note;

// The calls GCC's -fsanitize=thread puts before each load and store of the kernel sources (every one: a
// store after a load of the same address too, which its address sanitizer's calls leave out), in place of
// their atomic operations (done here, as they would have been), and where an object's construction
// begins (nothing to do; with --param tsan-instrument-func-entry-exit=0 none at each function). A call
// the sources come to make that is not here fails the link, naming it: add it here.
#define KUSARI_TRAFFIC_HOOK extern "C" __attribute__((visibility("default"), noinline))
// The load and the store of `size` bytes.
#define KUSARI_TRAFFIC_HOOKS(size)                                                                   \
  KUSARI_TRAFFIC_HOOK void __tsan_read##size(void* a) { hooked<size>(a, false, __builtin_return_address(0)); } \
  KUSARI_TRAFFIC_HOOK void __tsan_write##size(void* a) { hooked<size>(a, true, __builtin_return_address(0)); }
KUSARI_TRAFFIC_HOOKS(1)
KUSARI_TRAFFIC_HOOKS(2)
KUSARI_TRAFFIC_HOOKS(4)
KUSARI_TRAFFIC_HOOKS(8)
KUSARI_TRAFFIC_HOOKS(16)
KUSARI_TRAFFIC_HOOK void __tsan_read_range(void* a, size_t n) {
  note(reinterpret_cast<uintptr_t>(a), n, false, __builtin_return_address(0));
}
KUSARI_TRAFFIC_HOOK void __tsan_write_range(void* a, size_t n) {
  note(reinterpret_cast<uintptr_t>(a), n, true, __builtin_return_address(0));
}
// The atomic load, store and fetch-and-add of an integer of `bits` (`order`: GCC's memory orders); a
// fetch-and-add counts as a store.
#define KUSARI_TRAFFIC_ATOMICS(bits)                                                                         \
  KUSARI_TRAFFIC_HOOK int##bits##_t __tsan_atomic##bits##_load(const volatile int##bits##_t* a, int order) { \
    note(reinterpret_cast<uintptr_t>(a), bits / 8, false, __builtin_return_address(0));                      \
    return __atomic_load_n(a, order);                                                                        \
  }                                                                                                          \
  KUSARI_TRAFFIC_HOOK void __tsan_atomic##bits##_store(volatile int##bits##_t* a, int##bits##_t v, int order) { \
    note(reinterpret_cast<uintptr_t>(a), bits / 8, true, __builtin_return_address(0));                       \
    __atomic_store_n(a, v, order);                                                                           \
  }                                                                                                          \
  KUSARI_TRAFFIC_HOOK int##bits##_t __tsan_atomic##bits##_fetch_add(volatile int##bits##_t* a, int##bits##_t v, \
                                                                   int order) {                             \
    note(reinterpret_cast<uintptr_t>(a), bits / 8, true, __builtin_return_address(0));                       \
    return __atomic_fetch_add(a, v, order);                                                                  \
  }
KUSARI_TRAFFIC_ATOMICS(8)
KUSARI_TRAFFIC_ATOMICS(32)
KUSARI_TRAFFIC_ATOMICS(64)
// atomicCAS's compare-and-exchange of a 32-bit word (a store).
KUSARI_TRAFFIC_HOOK int __tsan_atomic32_compare_exchange_strong(volatile int32_t* a, int32_t* expected,
                                                                int32_t desired, int order, int failure_order) {
  note(reinterpret_cast<uintptr_t>(a), 4, true, __builtin_return_address(0));
  return __atomic_compare_exchange_n(a, expected, desired, false, order, failure_order);
}
KUSARI_TRAFFIC_HOOK void __tsan_atomic_thread_fence(int order) { __atomic_thread_fence(order); }
KUSARI_TRAFFIC_HOOK void __tsan_vptr_update(void**, void*) {}
KUSARI_TRAFFIC_HOOK void __tsan_init() {}
