// The CUDA backend's block cache against a recording stand-in for the device: size classes, reuse on
// the freeing stream only, large blocks split and merged within their segments, reuse across streams
// after their events, out-of-memory handling, counters.

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
#include <kusari/kernels/cuda/detail/block_cache.h>
#include <kusari/links/models/resnet.h>
#include <kusari/optimizers/momentum_sgd.h>

using namespace kusari;
using namespace kusari::kernels::cuda;

namespace {

// Device memory of a fixed capacity, handing out distinct fake addresses, with events that complete
// when the test says so.
class RecordingMemory final : public DeviceMemory {
 public:
  explicit RecordingMemory(size_t capacity) : capacity_(capacity) {}
  void* allocate(size_t bytes) override {
    if (used + bytes > capacity_) return nullptr;
    used += bytes;
    void* block = reinterpret_cast<void*>(next_);
    next_ += bytes + 4096;  // segments apart, as the device's are
    blocks[block] = bytes;
    return block;
  }
  void release(void* block, size_t bytes) override {
    REQUIRE(blocks.count(block) == 1);
    CHECK(blocks[block] == bytes);
    blocks.erase(block);
    used -= bytes;
  }
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

  size_t used = 0;
  std::map<void*, size_t> blocks;
  std::map<EventHandle, StreamHandle> recorded_on;
  std::set<EventHandle> done, destroyed, waited;
  uintptr_t events_made = 0;

 private:
  size_t capacity_;
  uintptr_t next_ = 1 << 20;
};

StreamHandle stream(int n) { return reinterpret_cast<StreamHandle>(static_cast<uintptr_t>(n)); }

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
  char* a = static_cast<char*>(cache.take(10 * kMiB, stream(1)));
  char* small_first = static_cast<char*>(cache.take(4 * kMiB, stream(1)));  // a segment of its own
  cache.give_back(a);
  cache.give_back(small_first);
  // The 4 MiB block fits best; then 4 MiB splits the 10 MiB block, leaving 6 MiB free beside it.
  CHECK(cache.take(4 * kMiB, stream(1)) == small_first);
  CHECK(cache.take(4 * kMiB, stream(1)) == a);
  char* b = static_cast<char*>(cache.take(2 * kMiB, stream(1)));
  CHECK(b == a + 4 * kMiB);
  CHECK(memory.blocks.size() == 2);  // no new segment
  const AllocatorStats s = cache.stats();
  CHECK(s.bytes_in_use == static_cast<int64_t>(10 * kMiB));
  CHECK(s.bytes_cached == static_cast<int64_t>(4 * kMiB));
  CHECK(s.peak_bytes_held == static_cast<int64_t>(14 * kMiB));
  // Another stream's request does not split this stream's free block.
  char* other = static_cast<char*>(cache.take(2 * kMiB, stream(2)));
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
  char* a = static_cast<char*>(cache.take(12 * kMiB, stream(1)));
  cache.give_back(a);
  char* first = static_cast<char*>(cache.take(4 * kMiB, stream(1)));
  char* second = static_cast<char*>(cache.take(4 * kMiB, stream(1)));
  char* third = static_cast<char*>(cache.take(4 * kMiB, stream(1)));
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
  char* a = static_cast<char*>(cache.take(8 * kMiB, stream(1)));
  cache.give_back(a);
  char* first = static_cast<char*>(cache.take(4 * kMiB, stream(1)));
  char* second = static_cast<char*>(cache.take(4 * kMiB, stream(1)));
  cache.mark_used_on(second, stream(2));
  cache.give_back(second);
  cache.give_back(first);
  // second waits for stream 2: 8 MiB is not free in one piece, so a new segment serves it.
  char* fresh = static_cast<char*>(cache.take(8 * kMiB, stream(1)));
  CHECK(fresh != a);
  memory.done.insert(memory.recorded_on.begin()->first);
  CHECK(cache.take(8 * kMiB, stream(1)) == a);
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

namespace {

// The loopback device's allocator, recording each request and release (size, and which request a
// release returns) while it serves them.
class RequestLog final : public Allocator {
 public:
  explicit RequestLog(Allocator& inner) : inner_(inner) {}
  void* allocate(const Device& device, size_t nbytes) override {
    void* p = inner_.allocate(device, nbytes);
    index_[p] = events.size();
    events.push_back({nbytes, -1});
    return p;
  }
  void deallocate(const Device& device, void* data, size_t nbytes) override {
    const auto it = index_.find(data);
    if (it != index_.end()) {
      events.push_back({nbytes, static_cast<int64_t>(it->second)});
      index_.erase(it);
    }
    inner_.deallocate(device, data, nbytes);
  }
  void release_cached() override { inner_.release_cached(); }
  AllocatorStats stats() const override { return inner_.stats(); }

  // A request (bytes, -1) or the release of request `freed` (bytes, freed).
  std::vector<std::pair<size_t, int64_t>> events;

 private:
  Allocator& inner_;
  std::map<void*, size_t> index_;
};

}  // namespace

TEST_CASE("a training step's requests get disjoint blocks, in less memory than they add up to at the peak") {
  // Two ResNet-20 steps on loopback:0 (batch 64, so that activations are large blocks), recorded.
  Allocator& loopback = allocator_for(DeviceType::loopback);
  RequestLog log(loopback);
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
  REQUIRE(log.events.size() > 1000);
  // Replayed through a cache on one stream: no two live blocks overlap, and the memory held stays
  // within a quarter over the largest sum of live requests.
  RecordingMemory memory(size_t{1} << 40);
  BlockCache cache(memory, "cuda:0");
  std::vector<char*> blocks(log.events.size(), nullptr);
  std::map<char*, size_t> live;
  size_t in_use = 0, peak_in_use = 0;
  bool disjoint = true;
  for (size_t i = 0; i < log.events.size(); ++i) {
    const auto [bytes, freed] = log.events[i];
    if (freed >= 0) {
      char* block = blocks[static_cast<size_t>(freed)];
      cache.give_back(block);
      live.erase(block);
      in_use -= bytes;
      continue;
    }
    char* block = static_cast<char*>(cache.take(bytes, stream(1)));
    const auto next = live.lower_bound(block);
    disjoint = disjoint && (next == live.end() || next->first >= block + bytes);
    disjoint = disjoint && (next == live.begin() || std::prev(next)->first + std::prev(next)->second <= block);
    live[block] = bytes;
    blocks[i] = block;
    in_use += bytes;
    peak_in_use = std::max(peak_in_use, in_use);
  }
  CHECK(disjoint);
  const double held = static_cast<double>(cache.stats().peak_bytes_held);
  MESSAGE("held ", held / (1 << 20), " MiB for a peak of ", static_cast<double>(peak_in_use) / (1 << 20),
          " MiB of live requests");
  CHECK(held <= 1.25 * static_cast<double>(peak_in_use));
}
