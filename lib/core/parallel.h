#pragma once
// The process-wide thread pool: kusari's loops, BLAS and oneDNN all run on the same OpenMP threads.

#include <cstdint>

#include <kusari/core/function_ref.h>

namespace kusari {

// Sets the number of threads used by kusari's loops and by BLAS (never more pools than one).
void set_num_threads(int n);
// The number of threads parallel loops use.
int get_num_threads();
// Runs body(begin, end) over [0, n) split into contiguous chunks of at least `grain` items, in parallel
// when n exceeds the grain and no parallel region is already running.
void parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> body);

}  // namespace kusari
