#include <kusari/core/parallel.h>

#include <algorithm>

#include <atomic>

#include <cblas.h>
#include <omp.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include <kusari/core/error.h>

namespace kusari {

namespace {

std::atomic<bool> flush_denormal{false};

// Applies the flush_denormal setting to the calling thread and to every thread of the pool.
void apply_flush_denormal() {
#if defined(__x86_64__) || defined(__i386__)
  constexpr unsigned kFlushBits = 0x8040;  // MXCSR flush-to-zero (bit 15) and denormals-are-zero (bit 6)
  const bool enabled = flush_denormal.load();
  const auto apply = [enabled] {
    _mm_setcsr(enabled ? (_mm_getcsr() | kFlushBits) : (_mm_getcsr() & ~kFlushBits));
  };
  apply();
#pragma omp parallel num_threads(omp_get_max_threads())
  apply();
#endif
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1) throw ValueError(cat("set_num_threads: expected at least 1 thread, got ", n));
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
  if (flush_denormal.load()) apply_flush_denormal();  // threads the pool may have started for n
}

bool set_flush_denormal(bool enabled) {
#if defined(__x86_64__) || defined(__i386__)
  flush_denormal.store(enabled);
  apply_flush_denormal();
  return true;
#else
  (void)enabled;
  return false;
#endif
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
