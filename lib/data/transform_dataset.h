#pragma once
// TransformDataset: applies a function to every example of another data set as it is fetched.

#include <functional>

#include <kusari/core/api.h>
#include <kusari/data/dataset.h>

namespace kusari::data {

// A function from one example to another (called concurrently when worker threads fetch).
using Transform = std::function<Example(Example)>;

// Example i is transform(base.get(i)).
class KUSARI_API TransformDataset : public Dataset {
 public:
  // Wraps `base`; throws ValueError when either argument is empty.
  TransformDataset(DatasetPtr base, Transform transform);
  // The size of the base data set.
  int64_t size() const override { return base_->size(); }

 protected:
  Example get_example(int64_t index, int64_t epoch) const override;

 private:
  DatasetPtr base_;
  Transform transform_;
};

}  // namespace kusari::data
