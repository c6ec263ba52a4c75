#pragma once
// ArrayListBuffer: float32 arrays seen as one fused buffer, without copying them together. Internal header.

#include <vector>

#include <kusari/core/array.h>
#include <kusari/distributed/detail/reduce_buffer.h>
#include <kusari/distributed/detail/wire_scaling.h>

namespace kusari::distributed {

// The concatenation of contiguous float32 host arrays; each contributes its values times the
// prescale, and the sums times the postscale overwrite the arrays.
class ArrayListBuffer : public ReduceBuffer {
 public:
  // The arrays must be float32, contiguous and on the CPU (the communicator stages others).
  ArrayListBuffer(const std::vector<Array>& arrays, WireScaling scaling, Dtype wire);

  int64_t size() const override { return offsets_.back(); }
  void load(int64_t begin, int64_t end, void* dst) const override;
  void accumulate(int64_t begin, int64_t end, void* inout) const override;
  void store(int64_t begin, int64_t end, const void* src) override;
  std::vector<int64_t> piece_offsets() const override { return offsets_; }

 private:
  // Calls body(data, n, at) for each array piece of [begin, end); `at` counts from begin.
  template <class Body>
  void for_each_piece(int64_t begin, int64_t end, Body&& body) const;

  std::vector<float*> data_;
  std::vector<int64_t> offsets_;
  WireScaling scaling_;
};

}  // namespace kusari::distributed
