#include <kusari/data/transform_dataset.h>

namespace kusari::data {

TransformDataset::TransformDataset(DatasetPtr base, Transform transform)
    : base_(std::move(base)), transform_(std::move(transform)) {
  if (!base_) throw ValueError("TransformDataset: expected a data set, got a null pointer");
  if (!transform_) throw ValueError("TransformDataset: expected a transform function, got an empty one");
}

Example TransformDataset::get_example(int64_t index, int64_t epoch) const {
  return transform_(base_->get(index, epoch));
}

}  // namespace kusari::data
