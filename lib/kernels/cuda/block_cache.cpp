// The CUDA backend's block cache: size classes, per-stream free lists, event-gated reuse across streams.

#include <kusari/kernels/cuda/detail/block_cache.h>

#include <algorithm>

#include <kusari/core/error.h>

namespace kusari::kernels::cuda {
namespace {

constexpr size_t kSmallUnit = 512;
constexpr size_t kSmallLimit = size_t{1} << 20;
constexpr size_t kLargeUnit = size_t{2} << 20;

// The largest block a request may be served from: a quarter more than its own size, so that a small
// request does not hold a large block.
size_t largest_fit(size_t rounded) { return rounded + rounded / 4; }

}  // namespace

size_t block_size_for(size_t bytes) {
  const size_t n = std::max<size_t>(bytes, 1);
  const size_t unit = n <= kSmallLimit ? kSmallUnit : kLargeUnit;
  return (n + unit - 1) / unit * unit;
}

BlockCache::BlockCache(DeviceMemory& memory, std::string device) : memory_(memory), device_(std::move(device)) {}

void* BlockCache::take(size_t bytes, StreamHandle stream) {
  const size_t rounded = block_size_for(bytes);
  std::lock_guard lock(mutex_);
  collect_completed();
  auto it = free_.lower_bound({stream, rounded});
  void* block = nullptr;
  size_t size = rounded;
  if (it != free_.end() && it->first.first == stream && it->first.second <= largest_fit(rounded)) {
    size = it->first.second;
    block = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) free_.erase(it);
    stats_.bytes_cached -= static_cast<int64_t>(size);
    ++stats_.pooled_allocations;
  } else {
    block = memory_.allocate(rounded);
    if (!block) {
      collect_all();
      release_free_locked();
      block = memory_.allocate(rounded);
    }
    if (!block) {
      throw DeviceError(cat("allocate on ", device_, ": out of device memory for ", bytes, " bytes (", rounded,
                            " as a block; ", stats_.bytes_in_use, " bytes in use, ", stats_.bytes_cached,
                            " cached)"));
    }
    ++stats_.fresh_allocations;
  }
  live_[block] = Block{size, stream, {}};
  stats_.bytes_in_use += static_cast<int64_t>(size);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.peak_bytes_held = std::max(stats_.peak_bytes_held, stats_.bytes_in_use + stats_.bytes_cached);
  return block;
}

void BlockCache::mark_used_on(void* block, StreamHandle stream) {
  std::lock_guard lock(mutex_);
  const auto it = live_.find(block);
  if (it == live_.end()) throw ValueError(cat("mark_used_on on ", device_, ": not a live block of this device"));
  Block& b = it->second;
  if (stream != b.stream && std::find(b.also_used_on.begin(), b.also_used_on.end(), stream) == b.also_used_on.end()) {
    b.also_used_on.push_back(stream);
  }
}

void BlockCache::give_back(void* block) {
  std::lock_guard lock(mutex_);
  const auto it = live_.find(block);
  if (it == live_.end()) throw ValueError(cat("deallocate on ", device_, ": not a live block of this device"));
  Block& b = it->second;
  // The events come first: if recording one fails the block stays live (and is leaked), never reused
  // while another stream may still touch it.
  std::vector<EventHandle> events;
  try {
    for (StreamHandle s : b.also_used_on) events.push_back(memory_.record(s));
  } catch (...) {
    for (EventHandle e : events) memory_.destroy(e);
    throw;
  }
  const size_t bytes = b.bytes;
  const StreamHandle stream = b.stream;
  live_.erase(it);
  stats_.bytes_in_use -= static_cast<int64_t>(bytes);
  stats_.bytes_cached += static_cast<int64_t>(bytes);
  if (events.empty()) {
    free_[{stream, bytes}].push_back(block);
  } else {
    waiting_.push_back(Waiting{block, bytes, stream, std::move(events)});
  }
}

void BlockCache::release_free() {
  std::lock_guard lock(mutex_);
  collect_completed();
  release_free_locked();
}

AllocatorStats BlockCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void BlockCache::collect_completed() {
  std::erase_if(waiting_, [&](Waiting& w) {
    if (!std::all_of(w.events.begin(), w.events.end(), [&](EventHandle e) { return memory_.completed(e); })) {
      return false;
    }
    for (EventHandle e : w.events) memory_.destroy(e);
    free_[{w.stream, w.bytes}].push_back(w.block);
    return true;
  });
}

void BlockCache::collect_all() {
  for (Waiting& w : waiting_) {
    for (EventHandle e : w.events) memory_.wait(e);
  }
  collect_completed();
}

void BlockCache::release_free_locked() {
  // Each block leaves the lists before it is released, so a release that throws cannot be repeated.
  while (!free_.empty()) {
    const auto it = free_.begin();
    const size_t bytes = it->first.second;
    std::vector<void*> blocks = std::move(it->second);
    free_.erase(it);
    stats_.bytes_cached -= static_cast<int64_t>(bytes * blocks.size());
    for (void* block : blocks) memory_.release(block, bytes);
  }
}

}  // namespace kusari::kernels::cuda
