#pragma once
// TupleDataset: examples are the rows (axis-0 slices) of several arrays of equal length.

#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/dataset.h>

namespace kusari::data {

// Example i is {arrays[0][i], arrays[1][i], ...} (views, no copy).
class KUSARI_API TupleDataset : public Dataset {
 public:
  // Throws ShapeError unless every array has at least one axis and all have the same length.
  explicit TupleDataset(std::vector<Array> arrays);
  // Length of the arrays along axis 0.
  int64_t size() const override { return size_; }
  // The arrays the examples are cut from.
  const std::vector<Array>& arrays() const { return arrays_; }

 protected:
  Example get_example(int64_t index, int64_t epoch) const override;

 private:
  std::vector<Array> arrays_;
  int64_t size_ = 0;
};

}  // namespace kusari::data
