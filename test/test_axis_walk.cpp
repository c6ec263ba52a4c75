// The odometer walk over some axes of an array (kernels/detail/axis_walk.h), on the host: its offsets,
// element after element and around again, are those of the row-major index under the strides, for no
// axis, one, several, extents of 1, broadcast (zero) and negative strides.

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include <kusari/kernels/detail/axis_walk.h>

using namespace kusari::kernels;

namespace {

// The offset of row-major index i over these extents and strides, by division.
int64_t offset_by_division(int64_t i, const std::vector<int64_t>& extents, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (std::size_t d = extents.size(); d-- > 0;) {
    offset += (i % extents[d]) * strides[d];
    i /= extents[d];
  }
  return offset;
}

}  // namespace

TEST_CASE("a walk's offsets are the row-major indexes' under the strides, and it wraps to the first") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{}, {}},
      {{7}, {3}},
      {{7, 7}, {14336, 2048}},  // a 7 x 7 window of a channels-last (N, 2048, 7, 7) array
      {{2, 1, 3, 4}, {60, 100, 4, 1}},
      {{3, 5}, {0, 1}},         // broadcast along the first axis
      {{4, 3}, {-3, 1}},        // flipped rows
      {{2, 3, 2, 2, 3}, {72, 24, 12, 6, 2}}};
  for (const auto& c : cases) {
    const std::vector<int64_t>& extents = c.first;
    const std::vector<int64_t>& strides = c.second;
    CAPTURE(extents.size());
    int64_t count = 1;
    for (const int64_t e : extents) count *= e;
    AxisWalk<12> walk(static_cast<int>(extents.size()), extents.data(), strides.data());
    bool equal = true;
    for (int64_t i = 0; i < 2 * count; ++i, walk.next()) {
      equal = equal && walk.offset() == offset_by_division(i % count, extents, strides);
    }
    CHECK(equal);
  }
}
