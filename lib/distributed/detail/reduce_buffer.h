#pragma once
// ReduceBuffer: the flat sequence of elements an all-reduce algorithm sums across ranks. Each rank
// contributes its own values (read range by range, in the wire dtype) and receives the sums; nothing
// forces the whole buffer to exist in wire form at once. Internal header.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <kusari/core/array.h>

namespace kusari::distributed {

// Elements [0, size()) summed across ranks in place.
class ReduceBuffer {
 public:
  // A buffer of elements that travel as `wire` (float32, float16 or bfloat16).
  explicit ReduceBuffer(Dtype wire);
  virtual ~ReduceBuffer() = default;

  // Number of elements.
  virtual int64_t size() const = 0;
  // Writes this rank's contribution to [begin, end) to dst, in the wire dtype.
  virtual void load(int64_t begin, int64_t end, void* dst) const = 0;
  // Adds this rank's contribution to [begin, end) to the partial sums at inout (in float32, rounded
  // to the wire dtype).
  virtual void accumulate(int64_t begin, int64_t end, void* inout) const = 0;
  // Takes the final sums of [begin, end) from src. A range is never loaded or accumulated after it
  // was stored.
  virtual void store(int64_t begin, int64_t end, const void* src) = 0;
  // Where each piece the caller handed in starts, followed by size() (per-tensor algorithms use it).
  virtual std::vector<int64_t> piece_offsets() const = 0;

  // Element type on the wire.
  Dtype wire_dtype() const { return wire_; }
  // Bytes per wire element.
  size_t wire_itemsize() const { return itemsize_; }
  // Bytes of n wire elements.
  size_t wire_bytes(int64_t n) const { return static_cast<size_t>(n) * itemsize_; }

 private:
  Dtype wire_;
  size_t itemsize_;
};

// Uninitialised host memory of nbytes bytes (a uint8 array) from kusari's pooled allocator, so that
// scratch space reused from one all-reduce to the next costs no page faults.
Array scratch(size_t nbytes);

// Adds `elements` wire elements of `itemsize` bytes to a byte address.
inline void* advance(void* data, int64_t elements, size_t itemsize) {
  return static_cast<std::byte*>(data) + static_cast<size_t>(elements) * itemsize;
}
// Read-only advance.
inline const void* advance(const void* data, int64_t elements, size_t itemsize) {
  return static_cast<const std::byte*>(data) + static_cast<size_t>(elements) * itemsize;
}

}  // namespace kusari::distributed
