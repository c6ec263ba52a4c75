#include <kusari/data/parallel_each.h>

#include <exception>
#include <mutex>

#include <kusari/core/parallel.h>

namespace kusari::data {

void parallel_each(int64_t n, FunctionRef<void(int64_t)> body) {
  std::mutex mutex;
  int64_t failed_index = n;
  std::exception_ptr failure;
  parallel_for(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (i < failed_index) {
          failed_index = i;
          failure = std::current_exception();
        }
        return;
      }
    }
  });
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kusari::data
