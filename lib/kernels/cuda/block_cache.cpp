// The CUDA backend's block cache: size classes, per-stream free lists, event-gated reuse across streams,
// large blocks split from and merged back into each stream's expandable segment, or the segments the
// device gave.

#include <kusari/kernels/cuda/detail/block_cache.h>

#include <algorithm>

#include <kusari/core/error.h>

namespace kusari::kernels::cuda {
namespace {

constexpr size_t kSmallUnit = 512;
constexpr size_t kSmallLimit = size_t{1} << 20;
constexpr size_t kLargeUnit = size_t{2} << 20;

// The largest block a small request may be served from: a quarter more than its own size, so that a
// small request does not hold a large block.
size_t largest_fit(size_t rounded) { return rounded + rounded / 4; }

// n rounded up to a multiple of unit.
size_t round_up(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

}  // namespace

size_t block_size_for(size_t bytes) { return round_up(std::max<size_t>(bytes, 1), kSmallUnit); }

size_t segment_size_for(size_t block) { return block <= kSmallLimit ? block : round_up(block, kLargeUnit); }

BlockCache::BlockCache(DeviceMemory& memory, std::string device, bool caching)
    : memory_(memory), device_(std::move(device)), caching_(caching) {}

BlockCache::Blocks::iterator BlockCache::add_segment(StreamHandle stream, size_t rounded, size_t asked,
                                                     bool last_try) {
  const size_t bytes = caching_ ? segment_size_for(rounded) : rounded;
  auto* base = static_cast<char*>(memory_.allocate(bytes));
  if (!base) {
    if (last_try) throw out_of_memory(bytes, caching_ ? " as a segment" : " uncached", asked);
    return blocks_.end();
  }
  segments_[base] = bytes;
  stats_.bytes_cached += static_cast<int64_t>(bytes);
  ++stats_.fresh_allocations;
  return make_free(blocks_.emplace(base, Block{bytes, stream, base, State::live, {}}).first);
}

BlockCache::Blocks::iterator BlockCache::fresh_block(StreamHandle stream, size_t rounded, size_t asked,
                                                     bool last_try) {
  if (caching_ && rounded > kSmallLimit && has_expandable(stream)) {
    return grow_expandable(stream, rounded, asked, last_try);
  }
  return add_segment(stream, rounded, asked, last_try);
}

DeviceError BlockCache::out_of_memory(size_t bytes, const char* as, size_t asked) const {
  return DeviceError(cat("allocate on ", device_, ": out of device memory for ", asked, " bytes (", bytes, as, "; ",
                         stats_.bytes_in_use, " bytes in use, ", stats_.bytes_cached, " cached)"));
}

BlockCache::Blocks::iterator BlockCache::free_end_of(const Expandable& e) {
  char* const end = e.end();
  auto it = blocks_.lower_bound(end);
  if (e.maps.empty() || it == blocks_.begin()) return blocks_.end();
  --it;
  const bool ends_there = it->second.segment == e.reserved.base && it->first + it->second.bytes == end;
  return ends_there && it->second.state == State::free ? it : blocks_.end();
}

BlockCache::Blocks::iterator BlockCache::grow_expandable(StreamHandle stream, size_t rounded, size_t asked,
                                                         bool last_try) {
  Expandable& e = expandable_.at(stream);
  // The growth extends a free block at the end, so that the request gets one run of addresses.
  const auto last = free_end_of(e);
  const size_t lacking = rounded - (last == blocks_.end() ? 0 : last->second.bytes);
  char* const end = e.end();
  const auto room = static_cast<size_t>(e.reserved.base + e.reserved.bytes - end);
  // (More than the room where the request alone is: no rounding past the end of size_t.)
  const size_t grow = lacking > room ? room + 1 : round_up(lacking, e.reserved.granularity);
  if (grow > room || !memory_.map(end, grow)) {
    if (last_try) throw out_of_memory(lacking, " to map", asked);
    return blocks_.end();
  }
  e.maps.push_back(grow);
  stats_.bytes_cached += static_cast<int64_t>(grow);
  ++stats_.fresh_allocations;
  return make_free(blocks_.emplace(end, Block{grow, stream, e.reserved.base, State::live, {}}).first);
}

bool BlockCache::has_expandable(StreamHandle stream) {
  auto found = expandable_.find(stream);
  if (found == expandable_.end()) found = expandable_.emplace(stream, Expandable{memory_.reserve(), {}}).first;
  return found->second.reserved.base != nullptr;
}

void BlockCache::unmap_free_ends() {
  for (auto& [stream, e] : expandable_) {
    while (!e.maps.empty()) {
      const auto last = free_end_of(e);
      const size_t bytes = e.maps.back();
      if (last == blocks_.end() || last->second.bytes < bytes) break;
      // The device first: where it fails, the records still say what is mapped.
      memory_.unmap(e.end() - bytes, bytes);
      unlist(last);
      if (last->second.bytes == bytes) {
        blocks_.erase(last);
      } else {
        last->second.bytes -= bytes;
        free_.insert({last->second.stream, last->second.bytes, last->first});
      }
      e.maps.pop_back();
      stats_.bytes_cached -= static_cast<int64_t>(bytes);
    }
  }
}

BlockCache::Blocks::iterator BlockCache::free_fit(StreamHandle stream, size_t rounded, bool large) {
  const auto fit = free_.lower_bound(std::tuple<StreamHandle, size_t, char*>{stream, rounded, nullptr});
  if (fit == free_.end() || std::get<0>(*fit) != stream || (!large && std::get<1>(*fit) > largest_fit(rounded))) {
    return blocks_.end();
  }
  return blocks_.find(std::get<2>(*fit));
}

void* BlockCache::take(size_t bytes, StreamHandle stream) {
  const size_t rounded = caching_ ? block_size_for(bytes) : std::max<size_t>(bytes, 1);
  const bool large = rounded > kSmallLimit;
  std::lock_guard lock(mutex_);
  collect_completed();
  auto it = caching_ ? free_fit(stream, rounded, large) : blocks_.end();
  bool pooled = it != blocks_.end();
  if (!pooled) it = fresh_block(stream, rounded, bytes, false);
  if (it == blocks_.end()) {
    // Out of memory: the blocks other streams' events still hold are waited for and freed, wholly free
    // segments and the mappings free ends cover go back to the device; a block freed in the middle may
    // then fit.
    collect_all();
    release_free_locked();
    it = caching_ ? free_fit(stream, rounded, large) : blocks_.end();
    pooled = it != blocks_.end();
    if (!pooled) it = fresh_block(stream, rounded, bytes, true);
  }
  if (pooled) ++stats_.pooled_allocations;
  char* const block = it->first;
  unlist(it);
  it->second.state = State::live;
  it->second.also_used_on.clear();
  stats_.bytes_cached -= static_cast<int64_t>(it->second.bytes);
  split(it, rounded);
  stats_.bytes_in_use += static_cast<int64_t>(blocks_.at(block).bytes);
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.peak_bytes_held = std::max(stats_.peak_bytes_held, stats_.bytes_in_use + stats_.bytes_cached);
  return block;
}

void BlockCache::mark_used_on(void* block, StreamHandle stream) {
  std::lock_guard lock(mutex_);
  const auto it = blocks_.find(static_cast<char*>(block));
  if (it == blocks_.end() || it->second.state != State::live) {
    throw ValueError(cat("mark_used_on on ", device_, ": not a live block of this device"));
  }
  Block& b = it->second;
  if (stream != b.stream && std::find(b.also_used_on.begin(), b.also_used_on.end(), stream) == b.also_used_on.end()) {
    b.also_used_on.push_back(stream);
  }
}

void BlockCache::give_back(void* block) {
  std::lock_guard lock(mutex_);
  const auto it = blocks_.find(static_cast<char*>(block));
  if (it == blocks_.end() || it->second.state != State::live) {
    throw ValueError(cat("deallocate on ", device_, ": not a live block of this device"));
  }
  Block& b = it->second;
  if (!caching_) {
    // Back to the device at once: cudaFree waits for the device's work, other streams' included. The
    // records go first, so that a release that throws is not repeated.
    const size_t bytes = b.bytes;
    blocks_.erase(it);
    segments_.erase(static_cast<char*>(block));
    stats_.bytes_in_use -= static_cast<int64_t>(bytes);
    memory_.release(block, bytes);
    return;
  }
  // The events come first: if recording one fails the block stays live (and is leaked), never reused
  // while another stream may still touch it.
  std::vector<EventHandle> events;
  try {
    for (StreamHandle s : b.also_used_on) events.push_back(memory_.record(s));
  } catch (...) {
    for (EventHandle e : events) memory_.destroy(e);
    throw;
  }
  stats_.bytes_in_use -= static_cast<int64_t>(b.bytes);
  stats_.bytes_cached += static_cast<int64_t>(b.bytes);
  if (events.empty()) {
    make_free(it);
  } else {
    b.state = State::waiting;
    waiting_.push_back(Waiting{it->first, std::move(events)});
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

void BlockCache::reset_peaks() {
  std::lock_guard lock(mutex_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
  stats_.peak_bytes_held = stats_.bytes_in_use + stats_.bytes_cached;
}

BlockCache::Blocks::iterator BlockCache::make_free(Blocks::iterator it) {
  it->second.state = State::free;
  // Whether free block b directly follows block a in a's segment (and so is of a's stream).
  const auto follows = [](Blocks::iterator a, Blocks::iterator b) {
    return b->second.state == State::free && a->second.segment == b->second.segment &&
           a->first + a->second.bytes == b->first && a->second.stream == b->second.stream;
  };
  // Free neighbours in its segment join it (a small request's segment holds it alone): first the next
  // block, then the one before, which then holds the whole.
  const auto next = std::next(it);
  if (next != blocks_.end() && follows(it, next)) {
    unlist(next);
    it->second.bytes += next->second.bytes;
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    const auto before = std::prev(it);
    if (before->second.state == State::free && follows(before, it)) {
      unlist(before);
      before->second.bytes += it->second.bytes;
      blocks_.erase(it);
      it = before;
    }
  }
  free_.insert({it->second.stream, it->second.bytes, it->first});
  return it;
}

void BlockCache::split(Blocks::iterator it, size_t rounded) {
  const size_t rest = it->second.bytes - rounded;
  if (rounded <= kSmallLimit || rest <= kSmallLimit) return;
  it->second.bytes = rounded;
  stats_.bytes_cached += static_cast<int64_t>(rest);
  make_free(blocks_.emplace(it->first + rounded, Block{rest, it->second.stream, it->second.segment, State::live, {}})
                .first);
}

void BlockCache::unlist(Blocks::iterator it) { free_.erase({it->second.stream, it->second.bytes, it->first}); }

void BlockCache::collect_completed() {
  std::erase_if(waiting_, [&](Waiting& w) {
    if (!std::all_of(w.events.begin(), w.events.end(), [&](EventHandle e) { return memory_.completed(e); })) {
      return false;
    }
    for (EventHandle e : w.events) memory_.destroy(e);
    make_free(blocks_.find(w.block));
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
  // Each segment leaves the records before it is released, so a release that throws cannot be repeated.
  for (auto segment = segments_.begin(); segment != segments_.end();) {
    const auto it = blocks_.find(segment->first);
    if (it->second.state != State::free || it->second.bytes != segment->second) {
      ++segment;
      continue;
    }
    char* base = segment->first;
    const size_t bytes = segment->second;
    unlist(it);
    blocks_.erase(it);
    segment = segments_.erase(segment);
    stats_.bytes_cached -= static_cast<int64_t>(bytes);
    memory_.release(base, bytes);
  }
  unmap_free_ends();
}

}  // namespace kusari::kernels::cuda
