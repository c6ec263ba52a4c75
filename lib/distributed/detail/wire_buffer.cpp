// Range operations on a buffer that is already in the wire dtype.

#include <kusari/distributed/detail/wire_buffer.h>

#include <cstring>

#include <kusari/distributed/detail/wire_format.h>

namespace kusari::distributed {

WireBuffer::WireBuffer(void* data, int64_t size, Dtype wire) : ReduceBuffer(wire), data_(data), size_(size) {}

void WireBuffer::load(int64_t begin, int64_t end, void* dst) const {
  if (end > begin) std::memcpy(dst, advance(data_, begin, wire_itemsize()), wire_bytes(end - begin));
}

void WireBuffer::accumulate(int64_t begin, int64_t end, void* inout) const {
  wire::add(advance(data_, begin, wire_itemsize()), wire_dtype(), end - begin, inout);
}

void WireBuffer::store(int64_t begin, int64_t end, const void* src) {
  void* dst = advance(data_, begin, wire_itemsize());
  if (end > begin && dst != src) std::memcpy(dst, src, wire_bytes(end - begin));
}

}  // namespace kusari::distributed
