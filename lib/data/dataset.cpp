#include <kusari/data/dataset.h>

namespace kusari::data {

Example Dataset::get(int64_t index, int64_t epoch) const {
  const int64_t n = size();
  if (index < 0 || index >= n) {
    throw IndexError(cat("Dataset::get: index ", index, " is out of range for a data set of size ", n));
  }
  return get_example(index, epoch);
}

}  // namespace kusari::data
