// The staging ring of host-to-device copies (detail/staging_ring.h).

#include <kusari/kernels/cuda/detail/staging_ring.h>

#include <algorithm>

#include <kusari/core/error.h>

namespace kusari::kernels::cuda {

size_t staging_capacity_for(size_t bytes, size_t current) {
  constexpr size_t step = size_t{16} << 20, most = size_t{512} << 20;
  const size_t twice = 2 * std::min(bytes, most);
  const size_t wanted = std::min((twice + step - 1) / step * step + step, most);
  return std::max(wanted, current);
}

StagingRing::StagingRing(size_t capacity) : capacity_(capacity) {
  if (capacity == 0 || capacity % kAlignment != 0) {
    throw ValueError(cat("StagingRing: expected a positive multiple of ", kAlignment, " bytes, got ", capacity));
  }
}

size_t StagingRing::reserve(size_t bytes, const std::function<void(EventHandle)>& wait) {
  if (bytes == 0 || bytes > capacity_) {
    throw ValueError(cat("StagingRing::reserve: expected 1 to ", capacity_, " bytes, got ", bytes));
  }
  const uint64_t size = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  uint64_t begin = head_;
  if (begin % capacity_ + size > capacity_) begin += capacity_ - begin % capacity_;
  const uint64_t end = begin + size;
  // The bytes [begin, end) last held the positions [begin - capacity, end - capacity).
  while (!regions_.empty() && regions_.front().begin + capacity_ < end) {
    wait(regions_.front().event);
    regions_.pop_front();
  }
  head_ = end;
  reserved_ = {begin, end, nullptr};
  return static_cast<size_t>(begin % capacity_);
}

void StagingRing::queued(EventHandle event) {
  reserved_.event = event;
  regions_.push_back(reserved_);
}

void StagingRing::retire(const std::function<bool(EventHandle)>& done) {
  while (!regions_.empty() && done(regions_.front().event)) regions_.pop_front();
}

void StagingRing::drain(const std::function<void(EventHandle)>& wait) {
  for (const Region& r : regions_) wait(r.event);
  regions_.clear();
}

}  // namespace kusari::kernels::cuda
