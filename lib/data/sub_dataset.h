#pragma once
// SubDataset: a view of part of another data set, by index range or by a list of indices.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/dataset.h>

namespace kusari::data {

// A view of `base` without copying its examples.
class KUSARI_API SubDataset : public Dataset {
 public:
  // Examples start..finish-1 of base (0 <= start <= finish <= base size, else IndexError).
  SubDataset(DatasetPtr base, int64_t start, int64_t finish);
  // Example i is base[indices[i]] (a permutation or any selection; every index checked against base).
  SubDataset(DatasetPtr base, std::vector<int64_t> indices);
  // Number of examples in the view.
  int64_t size() const override { return size_; }
  // The index in the base data set of this view's example i (no bounds check).
  int64_t base_index(int64_t i) const { return indices_ ? (*indices_)[static_cast<size_t>(i)] : start_ + i; }

 protected:
  Example get_example(int64_t index, int64_t epoch) const override;

 private:
  DatasetPtr base_;
  int64_t start_ = 0;
  int64_t size_ = 0;
  std::optional<std::vector<int64_t>> indices_;
};

// Splits `dataset` at random into two disjoint views of first_size and size - first_size examples
// (the same split for the same seed); throws IndexError unless 0 <= first_size <= size.
KUSARI_API std::pair<std::shared_ptr<SubDataset>, std::shared_ptr<SubDataset>> split_dataset_random(const DatasetPtr& dataset,
                                                                                                    int64_t first_size,
                                                                                                    uint64_t seed);

}  // namespace kusari::data
