// Range operations of the fused array view, split at array boundaries.

#include <kusari/distributed/detail/array_list_buffer.h>

#include <algorithm>

#include <kusari/distributed/detail/wire_format.h>

namespace kusari::distributed {

ArrayListBuffer::ArrayListBuffer(const std::vector<Array>& arrays, WireScaling scaling, Dtype wire)
    : ReduceBuffer(wire), scaling_(scaling) {
  offsets_.reserve(arrays.size() + 1);
  offsets_.push_back(0);
  for (const Array& array : arrays) {
    data_.push_back(array.data<float>());
    offsets_.push_back(offsets_.back() + array.size());
  }
}

template <class Body>
void ArrayListBuffer::for_each_piece(int64_t begin, int64_t end, Body&& body) const {
  size_t index = static_cast<size_t>(std::upper_bound(offsets_.begin(), offsets_.end(), begin) - offsets_.begin()) - 1;
  for (int64_t at = begin; at < end; ++index) {
    const int64_t piece_end = std::min(end, offsets_[index + 1]);
    body(data_[index] + (at - offsets_[index]), piece_end - at, at - begin);
    at = piece_end;
  }
}

void ArrayListBuffer::load(int64_t begin, int64_t end, void* dst) const {
  for_each_piece(begin, end, [&](float* data, int64_t n, int64_t at) {
    wire::pack(data, n, scaling_.prescale, wire_dtype(), advance(dst, at, wire_itemsize()));
  });
}

void ArrayListBuffer::accumulate(int64_t begin, int64_t end, void* inout) const {
  for_each_piece(begin, end, [&](float* data, int64_t n, int64_t at) {
    wire::accumulate(data, n, scaling_.prescale, wire_dtype(), advance(inout, at, wire_itemsize()));
  });
}

void ArrayListBuffer::store(int64_t begin, int64_t end, const void* src) {
  for_each_piece(begin, end, [&](float* data, int64_t n, int64_t at) {
    wire::unpack(advance(src, at, wire_itemsize()), wire_dtype(), n, scaling_.postscale, data);
  });
}

}  // namespace kusari::distributed
