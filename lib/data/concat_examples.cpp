#include <kusari/data/concat_examples.h>

namespace kusari::data {
namespace {

// Throws unless component k of example i matches the one of example 0.
void check_component(const std::vector<Example>& batch, size_t i, size_t k) {
  const Array& first = batch[0][k];
  const Array& other = batch[i][k];
  if (!other.defined()) throw ValueError(cat("concat_examples: component ", k, " of example ", i, " is undefined"));
  if (other.shape() != first.shape()) {
    throw ShapeError(cat("concat_examples: component ", k, " of example ", i, " has shape ", other.shape(),
                         ", expected shape ", first.shape(), " as in example 0"));
  }
  if (other.dtype() != first.dtype()) {
    throw DtypeError(cat("concat_examples: component ", k, " of example ", i, " has dtype ", other.dtype(),
                         ", expected dtype ", first.dtype(), " as in example 0"));
  }
}

}  // namespace

Example concat_examples(const std::vector<Example>& batch, std::optional<Device> device) {
  if (batch.empty()) throw ValueError("concat_examples: expected at least one example, got an empty batch");
  const size_t components = batch[0].size();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].size() != components) {
      throw ValueError(cat("concat_examples: example ", i, " has ", batch[i].size(), " components, expected ",
                           components, " as in example 0"));
    }
  }
  Example out;
  out.reserve(components);
  for (size_t k = 0; k < components; ++k) {
    const Array& first = batch[0][k];
    if (!first.defined()) throw ValueError(cat("concat_examples: component ", k, " of example 0 is undefined"));
    Shape shape{static_cast<int64_t>(batch.size())};
    for (int64_t extent : first.shape()) shape.push_back(extent);
    Array stacked = Array::empty(shape, first.dtype(), first.device());
    for (size_t i = 0; i < batch.size(); ++i) {
      check_component(batch, i, k);
      stacked.get_item({Index{static_cast<int64_t>(i)}}).assign(batch[i][k]);
    }
    out.push_back(device ? stacked.to(*device) : stacked);
  }
  return out;
}

}  // namespace kusari::data
