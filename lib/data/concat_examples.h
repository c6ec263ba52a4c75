#pragma once
// concat_examples: turns a list of examples into one example of batched arrays.

#include <optional>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/device.h>
#include <kusari/data/dataset.h>

namespace kusari::data {

// Stacks component k of every example along a new axis 0 (B examples of shape s give one array of
// shape (B, s...)), on `device` when given. Throws ValueError on an empty batch or differing component
// counts, ShapeError / DtypeError naming both shapes or dtypes when examples disagree.
KUSARI_API Example concat_examples(const std::vector<Example>& batch, std::optional<Device> device = std::nullopt);

}  // namespace kusari::data
