// The pooled host allocator: freed blocks are reused, so a steady loop stops asking the system for
// memory, and its counters return to where they started.

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include "testing.h"

using namespace kusari;

// Counts how often memory goes back to the system (this test binary replaces the global operator
// new and delete with malloc and free plus a counter).
std::atomic<int64_t> system_frees{0};
void* operator new(size_t n) {
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  ++system_frees;
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  ++system_frees;
  std::free(p);
}

namespace {

Allocator& host() { return allocator_for(DeviceType::cpu); }

// One "training step": a few arrays of fixed sizes, some computed, all freed at the end.
void step() {
  const Array x = Array::ones({64, 32});
  const Array w = Array::full({32, 16}, 0.5);
  const Array y = ops::matmul(x, w);
  const Array z = ops::sum(ops::relu(y), {0});
  CHECK(z.get_item({0}).item<float>() == 1024);
  const Array bytes = Array::zeros({3}, Dtype::uint8);
}

}  // namespace

TEST_CASE("a steady loop of same-size allocations stops allocating fresh blocks") {
  const AllocatorStats start = host().stats();
  step();  // warms the pool with every size the step uses
  const AllocatorStats warm = host().stats();
  for (int i = 0; i < 50; ++i) step();
  const AllocatorStats end = host().stats();
  CHECK(end.fresh_allocations == warm.fresh_allocations);
  CHECK(end.pooled_allocations > warm.pooled_allocations + 50 * 4);
  CHECK(end.bytes_in_use == start.bytes_in_use);
  CHECK(end.bytes_cached >= warm.bytes_cached);
}

TEST_CASE("bytes_in_use counts live blocks and returns to its start") {
  const AllocatorStats start = host().stats();
  {
    const Array a = Array::empty({1000});            // 4000 bytes
    const Array b = Array::empty({10}, Dtype::uint8);  // 10 bytes, rounded up to 64
    const AllocatorStats during = host().stats();
    CHECK(during.bytes_in_use - start.bytes_in_use >= 4000 + 64);
    CHECK(during.bytes_in_use - start.bytes_in_use <= 4000 + 4000 / 8 + 64);  // rounding wastes at most 1/8
    const Array view = a.get_item({Slice{0, 10}});
    CHECK(host().stats().bytes_in_use == during.bytes_in_use);  // views allocate nothing
  }
  CHECK(host().stats().bytes_in_use == start.bytes_in_use);
}

TEST_CASE("a freed block serves the next request of the same rounded size") {
  void* first = nullptr;
  {
    const std::shared_ptr<Storage> block = allocate_storage(Device::cpu(), 1000);
    first = block->data;
    CHECK(reinterpret_cast<uintptr_t>(first) % 64 == 0);
  }
  const AllocatorStats before = host().stats();
  const std::shared_ptr<Storage> again = allocate_storage(Device::cpu(), 1001);  // same size class as 1000
  CHECK(again->data == first);
  CHECK(host().stats().fresh_allocations == before.fresh_allocations);
  CHECK(host().stats().pooled_allocations == before.pooled_allocations + 1);
  const std::shared_ptr<Storage> zero = allocate_storage(Device::cpu(), 0);
  CHECK(zero->data != nullptr);
}

TEST_CASE("release_cached empties the pool") {
  { const Array a = Array::empty({4096}); }
  CHECK(host().stats().bytes_cached > 0);
  host().release_cached();
  CHECK(host().stats().bytes_cached == 0);
  const AllocatorStats before = host().stats();
  { const Array a = Array::empty({4096}); }
  CHECK(host().stats().fresh_allocations == before.fresh_allocations + 1);
}

TEST_CASE("cached blocks go back to the system rather than lift the pool far above its peak of live bytes") {
  host().release_cached();
  const int64_t mib = 1 << 20;
  const AllocatorStats start = host().stats();
  {
    const std::shared_ptr<Storage> big = allocate_storage(Device::cpu(), 256 * mib);  // a new peak of live bytes
    CHECK(host().stats().peak_bytes_in_use >= start.bytes_in_use + 256 * mib);
  }
  CHECK(host().stats().bytes_cached == 256 * mib);
  const int64_t peak = host().stats().peak_bytes_in_use;
  {
    // A size the pool does not hold: keeping the 256 MiB block would hold 416 MiB, far over the peak,
    // so the cached block is returned first.
    const std::shared_ptr<Storage> other = allocate_storage(Device::cpu(), 160 * mib);
    CHECK(host().stats().bytes_cached == 0);
    CHECK(host().stats().peak_bytes_in_use == peak);
    CHECK(host().stats().peak_bytes_held < start.bytes_in_use + 416 * mib);
  }
  // Below the peak the pool still reuses what it holds.
  const AllocatorStats before = host().stats();
  { const std::shared_ptr<Storage> again = allocate_storage(Device::cpu(), 160 * mib); }
  CHECK(host().stats().pooled_allocations == before.pooled_allocations + 1);
  CHECK(host().stats().fresh_allocations == before.fresh_allocations);
}

TEST_CASE("allocations from several threads keep the counters consistent") {
  const AllocatorStats start = host().stats();
  const int original = get_num_threads();
  set_num_threads(2);
  parallel_for(64, 1, [](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const std::shared_ptr<Storage> a = allocate_storage(Device::cpu(), static_cast<size_t>(100 + i));
      const std::shared_ptr<Storage> b = allocate_storage(Device::cpu(), 5000);
    }
  });
  set_num_threads(original);
  CHECK(host().stats().bytes_in_use == start.bytes_in_use);
}

TEST_CASE("the object pool reuses a freed block for its size class, on any thread") {
  void* a = pool_allocate(40);
  pool_deallocate(a, 40);
  CHECK(pool_allocate(48) == a);  // 40 and 48 bytes share the 48-byte class
  void* b = pool_allocate(49);    // the next class up is a different block
  CHECK(b != a);
  pool_deallocate(b, 49);
  pool_deallocate(a, 48);
  void* big = pool_allocate(1 << 20);  // beyond the pooled sizes: straight to the system
  static_cast<char*>(big)[(1 << 20) - 1] = 1;
  pool_deallocate(big, 1 << 20);

  // Blocks made on a worker thread outlive it and are freed (and then reused) here.
  std::vector<void*> made(64);
  std::thread worker([&] {
    for (void*& p : made) p = pool_allocate(24);
    void* cached = pool_allocate(24);
    pool_deallocate(cached, 24);  // stays in the worker's cache until the worker ends
  });
  worker.join();
  for (void* p : made) pool_deallocate(p, 24);
  CHECK(pool_allocate(24) == made.back());
  pool_deallocate(made.back(), 24);
}

TEST_CASE("a thread's cached pool blocks go back to the system when the thread ends") {
  std::vector<void*> made(10);
  int64_t frees_before_exit = 0;
  std::thread worker([&] {
    for (void*& p : made) p = pool_allocate(200);
    for (void* p : made) pool_deallocate(p, 200);  // cached on this thread
    frees_before_exit = system_frees.load();
  });
  worker.join();
  CHECK(system_frees.load() - frees_before_exit >= 10);
}
