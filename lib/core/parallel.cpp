#include <kusari/core/parallel.h>

#include <algorithm>

#include <cblas.h>
#include <omp.h>

#include <kusari/core/error.h>

namespace kusari {

void set_num_threads(int n) {
  if (n < 1) throw ValueError(cat("set_num_threads: expected at least 1 thread, got ", n));
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int get_num_threads() { return omp_get_max_threads(); }

void parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> body) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int threads = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), (n + grain - 1) / grain));
  if (threads <= 1 || omp_in_parallel()) {
    body(0, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num();
    const int64_t count = omp_get_num_threads();
    const int64_t begin = n * t / count;
    const int64_t end = n * (t + 1) / count;
    if (begin < end) body(begin, end);
  }
}

}  // namespace kusari
