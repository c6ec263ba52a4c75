// How the CUDA per-channel kernels cover an array (plain C++, so it runs in every build): which arrays
// are dense and how, and, replaying every thread of every block of a launch on the host, that each
// element is loaded exactly once, in loads that stay in one channel (or run over consecutive channels
// where the channels are innermost), with each thread's channels and each block's group fixed.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/channel_plan.h>

using namespace kusari;
using namespace kusari::kernels::cuda;

TEST_CASE("row-major arrays are (N, rest), channels-last ones and 2-D ones have their channels innermost") {
  const auto row_major = dense_channel_extents(Array::zeros({4, 3, 5, 7}));
  REQUIRE(row_major);
  CHECK(row_major->outer == 4);
  CHECK(row_major->inner == 35);
  const auto last = dense_channel_extents(in_order(Array::zeros({4, 3, 5, 7}), MemoryOrder::channels_last));
  REQUIRE(last);
  CHECK(last->outer == 140);
  CHECK(last->inner == 1);
  const auto matrix = dense_channel_extents(Array::zeros({6, 10}));
  REQUIRE(matrix);
  CHECK(matrix->outer == 6);
  CHECK(matrix->inner == 1);
  const auto pixels = dense_channel_extents(Array::zeros({6, 10, 1, 1}));
  REQUIRE(pixels);
  CHECK(pixels->inner == 1);
  // A sample slice of a dense array stays dense; a transposed view is neither.
  const auto slice = dense_channel_extents(Array::zeros({8, 3, 5}).get_item({Slice{2, 6}}));
  REQUIRE(slice);
  CHECK(slice->outer == 4);
  CHECK_FALSE(dense_channel_extents(Array::zeros({3, 4, 5}).transpose({1, 0, 2})));
  CHECK_FALSE(dense_channel_extents(Array::zeros({4, 6, 5}).get_item({Slice{}, Slice{0, 6, 2}})));
}

TEST_CASE("every thread of a launch loads each element once, in its own channels") {
  struct Case {
    int64_t outer, channels, inner;
    int vector;
    int64_t groups = 1;
  };
  const Case cases[] = {
      {256, 64, 1, 8},      // channels-last float16, 64 channels: 8 threads across a row
      {3000, 96, 1, 8},     // rows beyond one row group
      {40000, 256, 1, 8},   // many row groups, two channel tiles of 32 vectors
      {50, 3, 1, 4},        // 3 channels: no vector fits, one element a load
      {70, 600, 1, 4},      // 150 vectors a row: a partly idle last tile
      {16, 64, 49, 8},      // row-major 7 × 7 planes: 49 % 8 != 0, one element a load
      {32, 16, 64, 8},      // planes in vectors of 8
      {300, 4, 784, 4},     // slices beyond one
      {2, 5, 3, 2},         // tiny
      {9000, 2, 40, 4},     // many slices, a step across several samples
      {4096, 64, 1, 8, 8},  // ghost batch normalization's 8 groups, channels innermost
      {256, 16, 49, 4, 4},  // 4 groups of row-major planes
      {2048, 8, 16, 4, 2048},  // a group per sample: more groups than rows of partial sums
      {600, 24, 1, 4, 3},   // 3 groups of 200 rows
  };
  for (const Case& c : cases) {
    CAPTURE(c.outer);
    CAPTURE(c.channels);
    CAPTURE(c.inner);
    CAPTURE(c.vector);
    CAPTURE(c.groups);
    const ChannelPlan p = plan_channels(c.outer, c.channels, c.inner, c.vector, c.groups);
    CHECK(p.grid_y % c.groups == 0);
    CHECK(p.threads_x * p.threads_y <= unsigned{kChannelThreads});
    CHECK((p.threads_y & (p.threads_y - 1)) == 0);  // the sums' tree over y halves it
    CHECK(p.grid_y <= static_cast<unsigned>(std::max<int64_t>(1024, c.groups)));
    const int v = p.vector;
    CHECK((v == c.vector || v == 1));
    const int64_t size = c.outer * c.channels * c.inner;
    std::vector<int> loads(static_cast<size_t>(size), 0);
    bool in_channel = true, aligned = true, fixed = true, in_group = true;
    for (unsigned bx = 0; bx < p.grid_x; ++bx) {
      for (unsigned by = 0; by < p.grid_y; ++by) {
        for (unsigned tx = 0; tx < p.threads_x; ++tx) {
          for (unsigned ty = 0; ty < p.threads_y; ++ty) {
            const int64_t first = first_channel(p, bx, tx);
            for_each_channel_load(p, bx, by, tx, ty, [&](int64_t offset, int64_t channel) {
              fixed = fixed && channel == first;
              aligned = aligned && offset % v == 0;
              for (int lane = 0; lane < v; ++lane) {
                const int64_t element = offset + lane;
                const int64_t expected = p.channels_innermost() ? channel + lane : channel;
                in_channel = in_channel && element < size && element / c.inner % c.channels == expected;
                const int64_t outer_index = element / (c.inner * c.channels);
                in_group = in_group && outer_index / (c.outer / c.groups) == group_of_block(p, by);
                if (element < size) ++loads[static_cast<size_t>(element)];
              }
            });
          }
        }
      }
    }
    CHECK(in_channel);
    CHECK(aligned);
    CHECK(fixed);
    CHECK(in_group);
    int64_t once = 0;
    for (const int n : loads) once += n == 1;
    CHECK(once == size);
  }
}

TEST_CASE("loads are vectors where the channels (innermost) or the planes divide by the vector") {
  CHECK(plan_channels(10, 64, 1, 8).vector == 8);
  CHECK(plan_channels(10, 60, 1, 8).vector == 1);
  CHECK(plan_channels(10, 60, 1, 4).vector == 4);
  CHECK(plan_channels(10, 3, 56, 8).vector == 8);
  CHECK(plan_channels(10, 64, 49, 8).vector == 1);
}
