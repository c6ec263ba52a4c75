#include <kusari/data/iterator.h>

namespace kusari::data {

int64_t Iterator::dataset_size(const DatasetPtr& dataset, const char* kind) {
  if (!dataset) throw ValueError(cat(kind, ": expected a data set, got a null pointer"));
  return dataset->size();
}

}  // namespace kusari::data
