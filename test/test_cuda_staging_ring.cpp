// The CUDA backend's staging ring of host-to-device copies, on the host: the ring's size for a copy,
// regions that never overwrite a copy in flight, waits only for the copies overwritten (oldest first),
// wrapping to the start, retiring done copies, a step's batch staged while the last step's copies are
// still in flight.

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/staging_ring.h>

using namespace kusari;
using namespace kusari::kernels::cuda;

namespace {

constexpr size_t MiB = size_t{1} << 20;

// Numbered events: event i marks the i-th copy queued (1, 2, ...).
EventHandle event(uintptr_t i) { return reinterpret_cast<EventHandle>(i); }
uintptr_t number(EventHandle e) { return reinterpret_cast<uintptr_t>(e); }

// A ring and the copies it staged: where each went, which are still in flight, which were waited for.
struct Staged {
  StagingRing ring;
  std::vector<std::pair<size_t, size_t>> where{{0, 0}};  // copy i's offset and bytes (i from 1)
  std::vector<uintptr_t> waited;
  explicit Staged(size_t capacity) : ring(capacity) {}
  // Stages one more copy of `bytes`; returns its offset.
  size_t stage(size_t bytes) {
    const size_t at = ring.reserve(bytes, [this](EventHandle e) { waited.push_back(number(e)); });
    where.emplace_back(at, bytes);
    ring.queued(event(where.size() - 1));
    return at;
  }
};

bool overlap(std::pair<size_t, size_t> a, std::pair<size_t, size_t> b) {
  return a.first < b.first + b.second && b.first < a.first + a.second;
}

}  // namespace

TEST_CASE("a ring holds two copies of the size asked and 16 MiB more, in 16 MiB steps to 512 MiB, never shrinking") {
  CHECK(staging_capacity_for(0, 0) == 16 * MiB);
  CHECK(staging_capacity_for(1000, 0) == 32 * MiB);
  CHECK(staging_capacity_for(8 * MiB, 0) == 32 * MiB);
  CHECK(staging_capacity_for(8 * MiB + 1, 0) == 48 * MiB);
  // ResNet-50's float16 batch of 256 images of 224 x 224 x 3: 77 MB, 154 MB twice.
  CHECK(staging_capacity_for(256 * 3 * 224 * 224 * 2, 0) == 176 * MiB);
  CHECK(staging_capacity_for(300 * MiB, 0) == 512 * MiB);
  CHECK(staging_capacity_for(size_t{64} << 30, 0) == 512 * MiB);
  CHECK(staging_capacity_for(1000, 176 * MiB) == 176 * MiB);
}

TEST_CASE("regions follow one another aligned, wrap to the start, and wait only for the copies they overwrite") {
  Staged s(4096);
  CHECK(s.stage(1000) == 0);
  CHECK(s.stage(1) == 1024);  // 1000 rounded up to 256-byte alignment
  CHECK(s.stage(2000) == 1280);
  CHECK(s.waited.empty());
  CHECK(s.ring.in_flight() == 3);
  // 1024 more would pass the end (3328 + 1024 > 4096): at 0, over copy 1 alone.
  CHECK(s.stage(1024) == 0);
  CHECK(s.waited == std::vector<uintptr_t>{1});
  // The next copy at 1024 overwrites copies 2 and 3 (to 1536) but leaves copy 4 (at 0) in flight.
  CHECK(s.stage(512) == 1024);
  CHECK(s.waited == std::vector<uintptr_t>{1, 2, 3});
  CHECK(s.ring.in_flight() == 2);
  // A copy of the whole ring waits for every copy in flight, oldest first.
  CHECK(s.stage(4096) == 0);
  CHECK(s.waited == std::vector<uintptr_t>{1, 2, 3, 4, 5});
  std::vector<uintptr_t> drained;
  s.ring.drain([&](EventHandle e) { drained.push_back(number(e)); });
  CHECK(drained == std::vector<uintptr_t>{6});
  CHECK(s.ring.in_flight() == 0);
}

TEST_CASE("retiring forgets the oldest regions whose copies are done, up to the first that is not") {
  Staged s(4096);
  for (int k = 0; k < 5; ++k) s.stage(100);
  std::vector<uintptr_t> asked;
  s.ring.retire([&](EventHandle e) {
    asked.push_back(number(e));
    return number(e) < 3;
  });
  CHECK(asked == std::vector<uintptr_t>{1, 2, 3});
  CHECK(s.ring.in_flight() == 3);
  // The ring comes round over the retired regions (at 0 and 256) without waiting for them, then over
  // the next two, which it waits for.
  CHECK(s.stage(2800) == 1280);
  CHECK(s.stage(512) == 0);
  CHECK(s.waited.empty());
  CHECK(s.stage(300) == 512);
  CHECK(s.waited == std::vector<uintptr_t>{3, 4});
}

TEST_CASE("no region is handed out over a copy still in flight, and a copy is waited for only once") {
  std::mt19937_64 random(5);
  Staged s(64 * 1024);
  std::vector<bool> in_flight{false};
  for (int copy = 1; copy <= 2000; ++copy) {
    const size_t bytes = random() % 4 == 0 ? 1 + random() % (64 * 1024) : 1 + random() % 3000;
    const size_t before = s.waited.size();
    const size_t at = s.stage(bytes);
    for (size_t w = before; w < s.waited.size(); ++w) {
      REQUIRE(in_flight[s.waited[w]]);
      in_flight[s.waited[w]] = false;
    }
    REQUIRE(at % StagingRing::kAlignment == 0);
    REQUIRE(at + bytes <= 64 * 1024);
    for (size_t earlier = 1; earlier < in_flight.size(); ++earlier) {
      if (in_flight[earlier]) REQUIRE_FALSE(overlap(s.where[earlier], {at, bytes}));
    }
    in_flight.push_back(true);
    // Only copies that overlapped the new region were waited for.
    for (size_t w = before; w < s.waited.size(); ++w) {
      const auto old = s.where[s.waited[w]];
      REQUIRE((overlap(old, {at, bytes}) || old.first >= at));
    }
  }
}

TEST_CASE("a step's batch is staged while the last step's is still in flight") {
  // A 40 MiB batch in 8 MiB parts, the labels and an optimizer table each step, in a ring sized for it.
  const size_t batch = 40 * MiB, part = 8 * MiB;
  Staged s(staging_capacity_for(batch, 0));
  uintptr_t last_of_previous_step = 0, last_of_step_before = 0;
  for (int step = 0; step < 6; ++step) {
    const size_t before = s.waited.size();
    for (size_t done = 0; done < batch; done += part) s.stage(part);
    s.stage(256 * 8);
    s.stage(3000);
    for (size_t w = before; w < s.waited.size(); ++w) CHECK(s.waited[w] <= last_of_step_before);
    last_of_step_before = last_of_previous_step;
    last_of_previous_step = s.where.size() - 1;
  }
  CHECK_FALSE(s.waited.empty());
}

TEST_CASE("bad capacities and region sizes are named") {
  CHECK_THROWS_AS(StagingRing(0), ValueError);
  CHECK_THROWS_WITH_AS(StagingRing(1000), doctest::Contains("multiple of 256"), ValueError);
  StagingRing ring(4096);
  const auto no_wait = [](EventHandle) {};
  CHECK_THROWS_WITH_AS(ring.reserve(0, no_wait), doctest::Contains("1 to 4096 bytes, got 0"), ValueError);
  CHECK_THROWS_WITH_AS(ring.reserve(4097, no_wait), doctest::Contains("got 4097"), ValueError);
}
