#include <kusari/data/sub_dataset.h>

#include <kusari/data/random_stream.h>

namespace kusari::data {
namespace {

DatasetPtr require_base(DatasetPtr base, const char* op) {
  if (!base) throw ValueError(cat(op, ": expected a data set, got a null pointer"));
  return base;
}

}  // namespace

SubDataset::SubDataset(DatasetPtr base, int64_t start, int64_t finish)
    : base_(require_base(std::move(base), "SubDataset")), start_(start), size_(finish - start) {
  const int64_t n = base_->size();
  if (start < 0 || finish < start || finish > n) {
    throw IndexError(cat("SubDataset: expected 0 <= start <= finish <= ", n, ", got start ", start, " and finish ",
                         finish));
  }
}

SubDataset::SubDataset(DatasetPtr base, std::vector<int64_t> indices)
    : base_(require_base(std::move(base), "SubDataset")),
      size_(static_cast<int64_t>(indices.size())),
      indices_(std::move(indices)) {
  const int64_t n = base_->size();
  for (size_t i = 0; i < indices_->size(); ++i) {
    const int64_t index = (*indices_)[i];
    if (index < 0 || index >= n) {
      throw IndexError(cat("SubDataset: index ", index, " at position ", i, " is out of range for a data set of size ",
                           n));
    }
  }
}

Example SubDataset::get_example(int64_t index, int64_t epoch) const { return base_->get(base_index(index), epoch); }

std::pair<std::shared_ptr<SubDataset>, std::shared_ptr<SubDataset>> split_dataset_random(const DatasetPtr& dataset,
                                                                                         int64_t first_size,
                                                                                         uint64_t seed) {
  const int64_t n = require_base(dataset, "split_dataset_random")->size();
  if (first_size < 0 || first_size > n) {
    throw IndexError(cat("split_dataset_random: expected 0 <= first_size <= ", n, ", got ", first_size));
  }
  const std::vector<int64_t> order = random_permutation(n, seed);
  const auto middle = order.begin() + first_size;
  return {std::make_shared<SubDataset>(dataset, std::vector<int64_t>(order.begin(), middle)),
          std::make_shared<SubDataset>(dataset, std::vector<int64_t>(middle, order.end()))};
}

}  // namespace kusari::data
