#include <kusari/data/tuple_dataset.h>

namespace kusari::data {

TupleDataset::TupleDataset(std::vector<Array> arrays) : arrays_(std::move(arrays)) {
  if (arrays_.empty()) throw ValueError("TupleDataset: expected at least one array, got none");
  for (size_t k = 0; k < arrays_.size(); ++k) {
    if (!arrays_[k].defined() || arrays_[k].ndim() == 0) {
      throw ShapeError(cat("TupleDataset: expected array ", k, " to have at least one axis, got ",
                           arrays_[k].defined() ? arrays_[k].shape().to_string() : "an undefined array"));
    }
    if (arrays_[k].shape()[0] != arrays_[0].shape()[0]) {
      throw ShapeError(cat("TupleDataset: expected arrays of equal length along axis 0, array 0 has ",
                           arrays_[0].shape()[0], " and array ", k, " has ", arrays_[k].shape()[0]));
    }
  }
  size_ = arrays_[0].shape()[0];
}

Example TupleDataset::get_example(int64_t index, int64_t) const {
  Example example;
  example.reserve(arrays_.size());
  for (const Array& a : arrays_) example.push_back(a.get_item({Index{index}}));
  return example;
}

}  // namespace kusari::data
