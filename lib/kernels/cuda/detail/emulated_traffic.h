#pragma once
// The CUDA backend's host emulation (meson option cuda-emulation): the device-memory traffic of its
// kernels, as a GPU's memory system would see it. The kernel sources are compiled with calls before each
// load and store (GCC's -fsanitize=thread calls: the emulation's own hooks, not a sanitizer; GCC's
// vectorizer off, so that each access is as wide as the source's); while a recorded launch runs, each access of device memory is put with the accesses of the
// same instruction (the same call site and the same occurrence of it in each thread) by the other lanes
// of its warp: one request, which moves every 32-byte sector its lanes touch. A kernel whose lanes touch
// scattered sectors moves more sectors than the bytes it asks for fill, which no speed on a GPU makes up
// for; bytes asked for again across requests count once among a launch's distinct sectors (what reaches
// the memory chips when every re-read is served by the caches). KUSARI_EMULATED_TRAFFIC=FILE records every
// launch of the process and writes the tallies by kernel and by access site to FILE at exit (JSON, the
// addresses as an object and an offset for addr2line: scripts/emulated_traffic.py prints the table).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kusari::kernels::cuda::emulation {

// The accesses of one kind (loads or stores) of a kernel or of one of its instructions.
struct AccessTally {
  uint64_t accesses = 0;  // one per lane and instruction
  uint64_t requests = 0;  // one per warp and instruction
  uint64_t bytes = 0;     // asked for by the lanes
  uint64_t sectors = 0;   // 32-byte sectors the requests touched, each counted once per request
  uint64_t least_sectors = 0;  // the fewest sectors that hold each request's distinct bytes
  uint64_t distinct_sectors = 0;  // sectors touched in a launch, each counted once per launch
  // Adds `other`'s counts.
  AccessTally& operator+=(const AccessTally& other);
};

// One instruction's loads or stores.
struct SiteTraffic {
  const void* site = nullptr;  // the address of its hook's call in the kernel's code
  bool store = false;
  AccessTally tally;  // distinct_sectors left 0
};

// A kernel's traffic, summed over its recorded launches.
struct KernelTraffic {
  const void* kernel = nullptr;  // its address, as launch_kernel was given it
  uint64_t launches = 0;
  AccessTally loads, stores;
  std::vector<SiteTraffic> sites;  // by instruction
};

// Starts (true) or stops recording the launches that run from now on (KUSARI_EMULATED_TRAFFIC starts it
// at the first launch).
void record_traffic(bool on);

// Every kernel's traffic recorded so far in this process, in the order of their first launch.
std::vector<KernelTraffic> recorded_traffic();

// Forgets what was recorded.
void clear_recorded_traffic();

// Fails the running kernel thread's access of `bytes` at `address` (from the instruction at `site`, or
// null), which the caller found not to be a multiple of `alignment`, as a GPU fails a misaligned access
// (cudaErrorMisalignedAddress) where the host's processor may make it: the traffic hooks check every
// access against its type's alignment, and the 16-byte packs (detail/packs.cuh) their own.
void fail_misaligned(uintptr_t address, size_t bytes, size_t alignment, bool store, const void* site);

// Called by the emulation's threads: a launch of `kernel` begins (recorded if recording is on), one of its
// blocks has ended, the launch has ended (its tallies added to the process's), it failed (not counted).
void traffic_begin_launch(const void* kernel);
void traffic_end_block();
void traffic_end_launch();
void traffic_abandon_launch();

}  // namespace kusari::kernels::cuda::emulation
