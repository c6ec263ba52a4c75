#pragma once
// A parallel loop over indices whose body may throw.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/core/function_ref.h>

namespace kusari::data {

// Runs body(i) for every i in [0, n) on the thread pool; when bodies throw, rethrows the exception
// of the lowest failing index once the loop has ended (exceptions never leave a parallel region).
KUSARI_API void parallel_each(int64_t n, FunctionRef<void(int64_t)> body);

}  // namespace kusari::data
