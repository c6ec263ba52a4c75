#include <kusari/core/object_pool.h>

#include <array>

namespace kusari {
namespace {

constexpr size_t kGranule = 16;                   // size classes are multiples of this
constexpr size_t kLargestPooled = 1024;           // larger blocks go straight to operator new
constexpr size_t kClasses = kLargestPooled / kGranule;
constexpr size_t kMostCachedPerClass = 4096;      // beyond this a freed block goes back to the system

// One thread's cached blocks: a singly linked list per size class threaded through the blocks.
// Trivially destructible, so it stays readable after the thread's destructors ran (see Reclaimer).
struct FreeLists {
  std::array<void*, kClasses> heads{};
  std::array<size_t, kClasses> counts{};
  bool reclaimer_registered = false;  // whether the thread's Reclaimer exists yet
  bool closed = false;                // set once the thread's cache was handed back; later calls bypass it
};
// Initial-exec: the library is linked, not loaded later, so the lists sit at a fixed offset from the
// thread pointer and the hot paths reach them without a call.
[[gnu::tls_model("initial-exec")]] thread_local FreeLists lists;

// Frees a thread's cached blocks when the thread ends.
struct Reclaimer {
  ~Reclaimer() {
    for (size_t c = 0; c < kClasses; ++c) {
      while (void* block = lists.heads[c]) {
        lists.heads[c] = *static_cast<void**>(block);
        ::operator delete(block);
      }
      lists.counts[c] = 0;
    }
    lists.closed = true;
  }
};
thread_local Reclaimer reclaimer;

// Makes sure the thread hands its cached blocks back when it ends.
void register_reclaimer() {
  (void)&reclaimer;  // the first use constructs it and schedules its destructor
  lists.reclaimer_registered = true;
}

size_t class_of(size_t bytes) { return (bytes + kGranule - 1) / kGranule - (bytes == 0 ? 0 : 1); }

}  // namespace

void* pool_allocate(size_t bytes) {
  if (bytes > kLargestPooled || lists.closed) return ::operator new(bytes);
  const size_t c = class_of(bytes);
  if (void* block = lists.heads[c]) {
    lists.heads[c] = *static_cast<void**>(block);
    --lists.counts[c];
    return block;
  }
  return ::operator new((c + 1) * kGranule);
}

void pool_deallocate(void* block, size_t bytes) noexcept {
  if (!block) return;
  const size_t c = class_of(bytes);
  if (bytes > kLargestPooled || lists.closed || lists.counts[c] >= kMostCachedPerClass) {
    ::operator delete(block);
    return;
  }
  if (!lists.reclaimer_registered) register_reclaimer();
  *static_cast<void**>(block) = lists.heads[c];
  lists.heads[c] = block;
  ++lists.counts[c];
}

}  // namespace kusari
