// The CUDA backend's block cache against a recording stand-in for the device: size classes, reuse on
// the freeing stream only, large blocks split and merged within their segments or a stream's expandable
// segment, reuse across streams after their events, out-of-memory handling, counters, and a recorded
// training step replayed.

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <kusari/core/allocator.h>
#include <kusari/core/error.h>
#include <kusari/functions/functions.h>
#include <kusari/kernels/cuda/detail/allocation_replay.h>
#include <kusari/kernels/cuda/detail/block_cache.h>
#include <kusari/links/models/resnet.h>
#include <kusari/optimizers/momentum_sgd.h>

using namespace kusari;
using namespace kusari::kernels::cuda;

namespace {

// Device memory of a fixed capacity, handing out distinct fake addresses, with events that complete
// when the test says so; with a granularity, it also reserves addresses and maps memory into them.
class RecordingMemory final : public DeviceMemory {
 public:
  explicit RecordingMemory(size_t capacity, size_t granularity = 0)
      : capacity_(capacity), granularity_(granularity) {}
  void* allocate(size_t bytes) override {
    if (!claim(bytes)) return nullptr;
    void* block = reinterpret_cast<void*>(next_);
    next_ += bytes + 4096;  // segments apart, as the device's are
    blocks[block] = bytes;
    return block;
  }
  void release(void* block, size_t bytes) override { give_up(blocks, block, bytes); }
  EventHandle record(StreamHandle stream) override {
    auto* e = reinterpret_cast<EventHandle>(++events_made);
    recorded_on[e] = stream;
    return e;
  }
  bool completed(EventHandle event) override { return done.count(event) > 0; }
  void wait(EventHandle event) override {
    waited.insert(event);
    done.insert(event);
  }
  void destroy(EventHandle event) override { destroyed.insert(event); }
  Reservation reserve() override {
    if (granularity_ == 0) return {};
    auto* base = reinterpret_cast<char*>(next_);
    next_ += capacity_ + 4096;
    reserved.push_back({base, capacity_, granularity_});
    return reserved.back();
  }
  bool map(char* at, size_t bytes) override {
    CHECK(bytes % granularity_ == 0);
    const auto reservation = std::find_if(reserved.begin(), reserved.end(), [&](const Reservation& r) {
      return at >= r.base && at + bytes <= r.base + r.bytes;
    });
    REQUIRE(reservation != reserved.end());
    CHECK((at - reservation->base) % granularity_ == 0);
    const auto after = mapped.lower_bound(at);
    CHECK((after == mapped.end() || after->first >= at + bytes));  // nothing mapped twice
    CHECK((after == mapped.begin() || static_cast<char*>(std::prev(after)->first) + std::prev(after)->second <= at));
    if (!claim(bytes)) return false;
    mapped[at] = bytes;
    return true;
  }
  void unmap(char* at, size_t bytes) override { give_up(mapped, at, bytes); }

  size_t used = 0;
  std::map<void*, size_t> blocks;
  std::map<void*, size_t> mapped;  // each map() call's bytes, by address
  std::vector<Reservation> reserved;
  std::map<EventHandle, StreamHandle> recorded_on;
  std::set<EventHandle> done, destroyed, waited;
  uintptr_t events_made = 0;

 private:
  // Counts `bytes` as used; false where that would pass the capacity.
  bool claim(size_t bytes) {
    if (used + bytes > capacity_) return false;
    used += bytes;
    return true;
  }
  // Takes back `bytes` at `at`, which `records` must hold with that size.
  void give_up(std::map<void*, size_t>& records, void* at, size_t bytes) {
    REQUIRE(records.count(at) == 1);
    CHECK(records[at] == bytes);
    records.erase(at);
    used -= bytes;
  }

  size_t capacity_;
  size_t granularity_;
  uintptr_t next_ = 1 << 20;
};

StreamHandle stream(int n) { return reinterpret_cast<StreamHandle>(static_cast<uintptr_t>(n)); }

// The block of at least `bytes` that `cache` gives for work on stream `n`, as addresses.
char* take(BlockCache& cache, size_t bytes, int n) { return static_cast<char*>(cache.take(bytes, stream(n))); }

constexpr size_t kMiB = size_t{1} << 20;

}  // namespace

TEST_CASE("block sizes: 512-byte steps; segments of the block up to 1 MiB, 2 MiB steps above") {
  CHECK(block_size_for(0) == 512);
  CHECK(block_size_for(1) == 512);
  CHECK(block_size_for(512) == 512);
  CHECK(block_size_for(513) == 1024);
  CHECK(block_size_for(kMiB) == kMiB);
  CHECK(block_size_for(kMiB + 1) == kMiB + 512);
  CHECK(block_size_for(5 * kMiB) == 5 * kMiB);
  CHECK(segment_size_for(kMiB) == kMiB);
  CHECK(segment_size_for(kMiB + 512) == 2 * kMiB);
  CHECK(segment_size_for(5 * kMiB) == 6 * kMiB);
}

TEST_CASE("a large request takes the smallest free block that holds it; its rest stays free") {
  RecordingMemory memory(64 * kMiB);
  BlockCache cache(memory, "cuda:0");
  char* a = take(cache, 10 * kMiB, 1);
  char* small_first = take(cache, 4 * kMiB, 1);  // a segment of its own
  cache.give_back(a);
  cache.give_back(small_first);
  // The 4 MiB block fits best; then 4 MiB splits the 10 MiB block, leaving 6 MiB free beside it.
  CHECK(cache.take(4 * kMiB, stream(1)) == small_first);
  CHECK(cache.take(4 * kMiB, stream(1)) == a);
  char* b = take(cache, 2 * kMiB, 1);
  CHECK(b == a + 4 * kMiB);
  CHECK(memory.blocks.size() == 2);  // no new segment
  const AllocatorStats s = cache.stats();
  CHECK(s.bytes_in_use == static_cast<int64_t>(10 * kMiB));
  CHECK(s.bytes_cached == static_cast<int64_t>(4 * kMiB));
  CHECK(s.peak_bytes_held == static_cast<int64_t>(14 * kMiB));
  // Another stream's request does not split this stream's free block.
  char* other = take(cache, 2 * kMiB, 2);
  CHECK(memory.blocks.count(other) == 1);
  // A rest of 1 MiB or less stays with the block: 3.5 MiB of the 4 MiB left takes it whole.
  CHECK(cache.take(3 * kMiB + kMiB / 2, stream(1)) == a + 6 * kMiB);
  CHECK(cache.stats().bytes_cached == 0);
}

TEST_CASE("the peaks start over from what is in use and held when reset") {
  RecordingMemory memory(64 * kMiB);
  BlockCache cache(memory, "cuda:0");
  void* big = cache.take(20 * kMiB, stream(1));
  void* kept = cache.take(4 * kMiB, stream(1));
  cache.give_back(big);
  CHECK(cache.stats().peak_bytes_in_use == static_cast<int64_t>(24 * kMiB));
  cache.reset_peaks();
  CHECK(cache.stats().peak_bytes_in_use == static_cast<int64_t>(4 * kMiB));
  CHECK(cache.stats().peak_bytes_held == static_cast<int64_t>(24 * kMiB));  // the freed block is still cached
  cache.release_free();
  cache.reset_peaks();
  CHECK(cache.stats().peak_bytes_held == static_cast<int64_t>(4 * kMiB));
  void* more = cache.take(2 * kMiB, stream(1));
  CHECK(cache.stats().peak_bytes_in_use == static_cast<int64_t>(6 * kMiB));
  CHECK(cache.stats().peak_bytes_held == static_cast<int64_t>(6 * kMiB));
  cache.give_back(more);
  cache.give_back(kept);
}

TEST_CASE("freed neighbours merge into one block; a segment goes back to the device once wholly free") {
  RecordingMemory memory(64 * kMiB);
  BlockCache cache(memory, "cuda:0");
  char* a = take(cache, 12 * kMiB, 1);
  cache.give_back(a);
  char* first = take(cache, 4 * kMiB, 1);
  char* second = take(cache, 4 * kMiB, 1);
  char* third = take(cache, 4 * kMiB, 1);
  CHECK(first == a);
  CHECK(second == a + 4 * kMiB);
  CHECK(third == a + 8 * kMiB);
  // The middle one freed alone cannot serve 8 MiB; with the last beside it, it can.
  cache.give_back(second);
  cache.release_free();  // the segment still has live blocks: it stays
  CHECK(memory.blocks.count(a) == 1);
  cache.give_back(third);
  CHECK(cache.take(8 * kMiB, stream(1)) == second);
  cache.give_back(second);
  cache.give_back(first);  // merges with the 8 MiB after it: the whole segment is one free block
  CHECK(cache.take(12 * kMiB, stream(1)) == a);
  CHECK(memory.blocks.size() == 1);
  cache.give_back(a);
  cache.release_free();
  CHECK(memory.blocks.empty());
  CHECK(cache.stats().bytes_cached == 0);
  CHECK(cache.stats().fresh_allocations == 1);
}

TEST_CASE("a split block waiting on another stream merges only once its event completes") {
  RecordingMemory memory(64 * kMiB);
  BlockCache cache(memory, "cuda:0");
  char* a = take(cache, 8 * kMiB, 1);
  cache.give_back(a);
  char* first = take(cache, 4 * kMiB, 1);
  char* second = take(cache, 4 * kMiB, 1);
  cache.mark_used_on(second, stream(2));
  cache.give_back(second);
  cache.give_back(first);
  // second waits for stream 2: 8 MiB is not free in one piece, so a new segment serves it.
  char* fresh = take(cache, 8 * kMiB, 1);
  CHECK(fresh != a);
  memory.done.insert(memory.recorded_on.begin()->first);
  CHECK(cache.take(8 * kMiB, stream(1)) == a);
}

// A cache over a device of 64 MiB that maps memory into reserved addresses 2 MiB at a time.
struct ExpandableDevice {
  RecordingMemory memory{64 * kMiB, 2 * kMiB};
  BlockCache cache{memory, "cuda:0"};
};

TEST_CASE_FIXTURE(ExpandableDevice, "expandable: a stream's large blocks lie in one run of addresses, mapped at its end as needed") {
  char* a = take(cache, 6 * kMiB, 1);
  char* b = take(cache, 10 * kMiB - 100, 1);
  CHECK(b == a + 6 * kMiB);
  CHECK(memory.mapped == std::map<void*, size_t>{{a, 6 * kMiB}, {b, 10 * kMiB}});
  CHECK(memory.blocks.empty());  // no segment of its own
  // A block of another stream lies in that stream's own reservation.
  char* other = take(cache, 2 * kMiB, 2);
  CHECK((other < a || other >= a + 64 * kMiB));
  // Freed neighbours merge whatever map() put them there: one request takes both, mapping nothing.
  cache.give_back(a);
  cache.give_back(b);
  CHECK(cache.stats().bytes_cached == static_cast<int64_t>(16 * kMiB));
  char* c = take(cache, 16 * kMiB, 1);
  CHECK(c == a);
  CHECK(memory.mapped.size() == 3);
  CHECK(cache.stats().fresh_allocations == 3);
  CHECK(cache.stats().pooled_allocations == 1);
}

TEST_CASE_FIXTURE(ExpandableDevice, "expandable: a request larger than the free end extends it by what it lacks") {
  char* a = take(cache, 6 * kMiB, 1);
  char* b = take(cache, 10 * kMiB, 1);
  cache.give_back(b);
  char* c = take(cache, 13 * kMiB, 1);
  CHECK(c == b);
  CHECK(memory.mapped == std::map<void*, size_t>{{a, 6 * kMiB}, {b, 10 * kMiB}, {b + 10 * kMiB, 4 * kMiB}});
  // The megabyte past the request stays with the block (a rest of 1 MiB or less is not split off).
  CHECK(cache.stats().bytes_in_use == static_cast<int64_t>(20 * kMiB));
  CHECK(cache.stats().bytes_cached == 0);
}

TEST_CASE_FIXTURE(ExpandableDevice, "expandable: release_free unmaps the free end, last map first, and leaves what is live") {
  char* a = take(cache, 6 * kMiB, 1);
  char* b = take(cache, 10 * kMiB, 1);
  char* c = take(cache, 4 * kMiB, 1);
  cache.give_back(c);
  cache.give_back(b);
  cache.release_free();
  CHECK(memory.mapped == std::map<void*, size_t>{{a, 6 * kMiB}});
  CHECK(cache.stats().bytes_cached == 0);
  // The end is mapped again as it is needed, where it was.
  CHECK(cache.take(8 * kMiB, stream(1)) == b);
  CHECK(memory.mapped.size() == 2);
}

TEST_CASE_FIXTURE(ExpandableDevice, "expandable: a free end shorter than the last map stays mapped; a small block there merges too") {
  char* x = take(cache, 2 * kMiB, 1);
  char* y = take(cache, 8 * kMiB, 1);
  cache.give_back(y);
  // 6.9 MiB of the free 8 leave a free end of 1.1 MiB, which a small request of 1 MiB may take.
  char* z = take(cache, 6 * kMiB + 900 * 1024, 1);
  CHECK(z == y);
  char* small = take(cache, kMiB, 1);
  CHECK(small == z + 6 * kMiB + 900 * 1024);
  cache.give_back(small);
  cache.release_free();
  CHECK(memory.mapped.size() == 2);  // the free end (1.1 MiB) is shorter than the last map (8 MiB)
  // Freed, z merges with the small block after it, and the whole last map goes back to the device.
  cache.give_back(z);
  CHECK(cache.stats().bytes_cached == static_cast<int64_t>(8 * kMiB));
  cache.release_free();
  CHECK(memory.mapped == std::map<void*, size_t>{{x, 2 * kMiB}});
  CHECK(cache.stats().bytes_cached == 0);
}

TEST_CASE("expandable: out of device memory, a block freed in the middle by a completed event serves the request") {
  RecordingMemory memory(16 * kMiB, 2 * kMiB);
  BlockCache cache(memory, "cuda:0");
  cache.take(8 * kMiB, stream(1));
  char* b = take(cache, 4 * kMiB, 1);
  cache.mark_used_on(b, stream(3));
  cache.give_back(b);  // waits for stream 3's event
  cache.take(2 * kMiB, stream(1));
  CHECK(memory.used == 14 * kMiB);
  CHECK(cache.take(4 * kMiB, stream(1)) == b);  // 2 MiB left to map; b once its event completed
  CHECK(memory.waited.size() == 1);
  CHECK(memory.used == 14 * kMiB);
}

TEST_CASE("expandable: out of device memory, other streams' free ends are unmapped and the growth retried") {
  RecordingMemory memory(16 * kMiB, 2 * kMiB);
  BlockCache cache(memory, "cuda:0");
  cache.take(8 * kMiB, stream(1));
  void* b = cache.take(6 * kMiB, stream(1));
  cache.mark_used_on(b, stream(3));
  cache.give_back(b);  // waits for stream 3's event, which the device has not reached yet
  char* c = take(cache, 8 * kMiB, 2);
  CHECK(memory.mapped.size() == 2);
  CHECK(memory.mapped.count(c) == 1);
  CHECK(memory.waited.size() == 1);
  CHECK(memory.used == 16 * kMiB);
  CHECK_THROWS_WITH_AS(cache.take(4 * kMiB, stream(2)),
                       "allocate on cuda:0: out of device memory for 4194304 bytes (4194304 to map; "
                       "16777216 bytes in use, 0 cached)",
                       DeviceError);
}

TEST_CASE("a freed block serves the next request of its size class on its own stream only") {
  RecordingMemory memory(64 * kMiB);
  BlockCache cache(memory, "cuda:0");
  void* a = cache.take(1000, stream(1));
  CHECK(cache.stats().bytes_in_use == 1024);
  cache.give_back(a);
  CHECK(cache.stats().bytes_in_use == 0);
  CHECK(cache.stats().bytes_cached == 1024);
  void* other_stream = cache.take(1000, stream(2));
  CHECK(other_stream != a);
  void* again = cache.take(900, stream(1));
  CHECK(again == a);
  const AllocatorStats s = cache.stats();
  CHECK(s.fresh_allocations == 2);
  CHECK(s.pooled_allocations == 1);
  CHECK(s.bytes_cached == 0);
  CHECK(s.peak_bytes_in_use == 2048);
}

TEST_CASE("a small request does not take a much larger free block") {
  RecordingMemory memory(64 * kMiB);
  BlockCache cache(memory, "cuda:0");
  void* big = cache.take(4 * kMiB, stream(1));
  cache.give_back(big);
  void* small = cache.take(512, stream(1));
  CHECK(small != big);
  void* close = cache.take(4 * kMiB - 100, stream(1));
  CHECK(close == big);
}

TEST_CASE("a block another stream used is reused only after that stream's event completes") {
  RecordingMemory memory(64 * kMiB);
  BlockCache cache(memory, "cuda:0");
  void* a = cache.take(4096, stream(1));
  cache.mark_used_on(a, stream(2));
  cache.mark_used_on(a, stream(2));  // noted once
  cache.mark_used_on(a, stream(1));  // its own stream needs no event
  cache.give_back(a);
  REQUIRE(memory.recorded_on.size() == 1);
  const EventHandle event = memory.recorded_on.begin()->first;
  CHECK(memory.recorded_on.begin()->second == stream(2));
  CHECK(cache.stats().bytes_cached == 4096);
  void* while_pending = cache.take(4096, stream(1));
  CHECK(while_pending != a);
  memory.done.insert(event);
  void* after = cache.take(4096, stream(1));
  CHECK(after == a);
  CHECK(memory.destroyed.count(event) == 1);
}

TEST_CASE("out of device memory: free blocks go back to the device, then the request fails with counts") {
  RecordingMemory memory(8 * kMiB);
  BlockCache cache(memory, "cuda:3");
  void* a = cache.take(4 * kMiB, stream(1));
  cache.give_back(a);
  // A request on another stream cannot use a's block; the cache returns it and the device has room.
  void* b = cache.take(6 * kMiB, stream(2));
  CHECK(b != nullptr);
  CHECK(memory.blocks.count(a) == 0);
  CHECK(cache.stats().bytes_cached == 0);
  try {
    cache.take(4 * kMiB, stream(2));
    FAIL("expected DeviceError");
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    CHECK(what.find("cuda:3") != std::string::npos);
    CHECK(what.find("out of device memory for 4194304 bytes") != std::string::npos);
    CHECK(what.find("6291456 bytes in use") != std::string::npos);
  }
  CHECK(cache.stats().bytes_in_use == static_cast<int64_t>(6 * kMiB));
}

TEST_CASE("out of device memory: a block freed in a segment still in use by a completed event serves the request") {
  RecordingMemory memory(16 * kMiB);
  BlockCache cache(memory, "cuda:0");
  cache.give_back(cache.take(12 * kMiB, stream(1)));
  cache.take(4 * kMiB, stream(1));
  char* z = take(cache, 6 * kMiB, 1);
  cache.mark_used_on(z, stream(3));
  cache.give_back(z);  // waits for stream 3's event; 2 MiB free beside it
  CHECK(cache.take(6 * kMiB, stream(1)) == z);  // no room for a 6 MiB segment: z once its event completed
  CHECK(memory.waited.size() == 1);
  CHECK(memory.used == 12 * kMiB);
}

TEST_CASE("out of device memory: blocks waiting on other streams are waited for, then returned") {
  RecordingMemory memory(8 * kMiB);
  BlockCache cache(memory, "cuda:0");
  void* a = cache.take(6 * kMiB, stream(1));
  cache.mark_used_on(a, stream(2));
  cache.give_back(a);
  REQUIRE(memory.recorded_on.size() == 1);
  const EventHandle event = memory.recorded_on.begin()->first;
  void* b = cache.take(6 * kMiB, stream(2));
  CHECK(memory.waited.count(event) == 1);
  CHECK(memory.destroyed.count(event) == 1);
  CHECK(memory.blocks.count(a) == 0);
  CHECK(memory.blocks.count(b) == 1);
  CHECK(cache.stats().bytes_cached == 0);
  CHECK(cache.stats().bytes_in_use == static_cast<int64_t>(6 * kMiB));
}

// A device whose event recording fails, as after a lost context.
class FailingEvents final : public DeviceMemory {
 public:
  void* allocate(size_t bytes) override { return ::operator new(bytes); }
  void release(void* block, size_t) override { ::operator delete(block); }
  EventHandle record(StreamHandle) override { throw DeviceError("cudaEventRecord: an illegal memory access"); }
  bool completed(EventHandle) override { return true; }
  void wait(EventHandle) override {}
  void destroy(EventHandle) override {}
  Reservation reserve() override { return {}; }
  bool map(char*, size_t) override { return false; }
  void unmap(char*, size_t) override {}
};

TEST_CASE("a block whose event cannot be recorded stays live, never reused") {
  FailingEvents memory;
  BlockCache cache(memory, "cuda:0");
  void* a = cache.take(4096, stream(1));
  cache.mark_used_on(a, stream(2));
  CHECK_THROWS_AS(cache.give_back(a), DeviceError);
  CHECK(cache.stats().bytes_in_use == 4096);
  void* b = cache.take(4096, stream(1));
  CHECK(b != a);
  cache.give_back(b);
  cache.release_free();
  CHECK(cache.stats().bytes_cached == 0);
  ::operator delete(a);  // the test's own cleanup of the block the cache had to leave
}

TEST_CASE("release_free returns every free block; blocks waiting on events stay") {
  RecordingMemory memory(64 * kMiB);
  BlockCache cache(memory, "cuda:0");
  void* a = cache.take(1 << 16, stream(1));
  void* b = cache.take(1 << 16, stream(1));
  cache.mark_used_on(b, stream(2));
  cache.give_back(a);
  cache.give_back(b);
  cache.release_free();
  CHECK(memory.blocks.count(a) == 0);
  CHECK(memory.blocks.count(b) == 1);
  CHECK(cache.stats().bytes_cached == 1 << 16);
  memory.done.insert(memory.recorded_on.begin()->first);
  cache.release_free();
  CHECK(memory.blocks.empty());
  CHECK(cache.stats().bytes_cached == 0);
  CHECK(cache.stats().peak_bytes_held == 2 << 16);
}

TEST_CASE("without caching every request is its own allocation of exactly its bytes, returned when freed") {
  RecordingMemory memory(4 * kMiB);
  BlockCache cache(memory, "cuda:0", false);
  void* a = cache.take(1000, stream(1));
  void* b = cache.take(3 * kMiB / 2, stream(1));
  CHECK(memory.blocks.at(a) == 1000);
  CHECK(memory.blocks.at(b) == 3 * kMiB / 2);
  CHECK(cache.stats().bytes_in_use == 1000 + 3 * kMiB / 2);
  // Used on another stream too: still returned at once (cudaFree waits for every stream), no event made.
  cache.mark_used_on(a, stream(2));
  cache.give_back(a);
  CHECK(memory.blocks.count(a) == 0);
  CHECK(memory.events_made == 0);
  void* c = cache.take(1000, stream(1));
  CHECK(memory.blocks.at(c) == 1000);
  cache.give_back(b);
  cache.give_back(c);
  CHECK(memory.blocks.empty());
  const AllocatorStats stats = cache.stats();
  CHECK(stats.fresh_allocations == 3);
  CHECK(stats.pooled_allocations == 0);
  CHECK(stats.bytes_in_use == 0);
  CHECK(stats.bytes_cached == 0);
  CHECK(stats.peak_bytes_in_use == 1000 + 3 * kMiB / 2);
  CHECK_THROWS_WITH_AS(cache.take(5 * kMiB, stream(1)),
                       doctest::Contains("out of device memory for 5242880 bytes (5242880 uncached;"), DeviceError);
  CHECK_THROWS_AS(cache.give_back(c), ValueError);
}

TEST_CASE("a pointer the cache did not give is refused with the device's name") {
  RecordingMemory memory(kMiB);
  BlockCache cache(memory, "cuda:1");
  int x = 0;
  CHECK_THROWS_WITH_AS(cache.give_back(&x), "deallocate on cuda:1: not a live block of this device", ValueError);
  CHECK_THROWS_WITH_AS(cache.mark_used_on(&x, stream(1)), "mark_used_on on cuda:1: not a live block of this device",
                       ValueError);
}

TEST_CASE("a training step's requests get disjoint blocks, in less memory than they add up to at the peak") {
  // Two ResNet-20 steps on loopback:0 (batch 64, so that activations are large blocks), recorded.
  Allocator& loopback = allocator_for(DeviceType::loopback);
  AllocationRecorder log(loopback);
  {
    const DeviceScope on_loopback(Device::loopback(0));
    auto model = std::make_shared<links::models::ResNet>(20);
    const Variable x(Array::normal({64, 3, 32, 32}, 0, 1, 1), false);
    const Variable t(Array::from_vector(std::vector<int32_t>(64, 3), {64}), false);
    model->forward(x);
    optimizers::MomentumSGD optimizer(0.01, 0.9);
    optimizer.setup(model);
    register_allocator(DeviceType::loopback, &log);
    for (int step = 0; step < 2; ++step) {
      optimizer.update([&] { return functions::softmax_cross_entropy(model->forward(x), t); });
    }
    register_allocator(DeviceType::loopback, &loopback);
  }
  REQUIRE(log.events().size() > 1000);
  // Replayed through a cache on one stream, with a segment for each large block and with an expandable
  // segment: no two live blocks overlap, and the memory held stays within a quarter over the largest sum
  // of live requests, the expandable segment's less than the segments'.
  const ReplayResult segments = replay_through_cache(log.events(), false);
  const ReplayResult expandable = replay_through_cache(log.events(), true);
  CHECK(segments.disjoint);
  CHECK(expandable.disjoint);
  const auto mib = [](size_t bytes) { return static_cast<double>(bytes) / (1 << 20); };
  MESSAGE("held ", mib(segments.peak_held), " MiB in segments, ", mib(expandable.peak_held),
          " MiB expandable, for a peak of ", mib(segments.peak_requested), " MiB of live requests");
  CHECK(static_cast<double>(segments.peak_held) <= 1.25 * static_cast<double>(segments.peak_requested));
  CHECK(expandable.peak_held < segments.peak_held);
}
