#pragma once
// The process-wide thread pool: kusari's loops, BLAS and oneDNN all run on the same OpenMP threads.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/function_ref.h>

namespace kusari {

// Sets the number of threads used by kusari's loops and by BLAS (never more pools than one).
KUSARI_API void set_num_threads(int n);
// The number of threads parallel loops use.
KUSARI_API int get_num_threads();
// Makes float arithmetic on the calling thread and on every thread of the pool treat subnormal numbers
// as zero (x86 flush-to-zero and denormals-are-zero), off by default: speed where tiny values linger
// (a momentum buffer decaying below the normal range takes ~100 cycles per element per step) at the
// cost of gradual underflow. Returns false, changing nothing, where the CPU has no such mode.
KUSARI_API bool set_flush_denormal(bool enabled);
// Runs body(begin, end) over [0, n) split into contiguous chunks of at least `grain` items, in parallel
// when n exceeds the grain and no parallel region is already running.
KUSARI_API void parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> body);

}  // namespace kusari
