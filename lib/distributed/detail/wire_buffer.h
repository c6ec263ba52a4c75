#pragma once
// WireBuffer: partial sums already in the wire dtype (a leader's node sum, a node's slice), summed
// across another group of ranks in place. Internal header.

#include <kusari/distributed/detail/reduce_buffer.h>

namespace kusari::distributed {

// `size` wire elements at `data` (not owned): the contribution, then the sums.
class WireBuffer : public ReduceBuffer {
 public:
  WireBuffer(void* data, int64_t size, Dtype wire);

  int64_t size() const override { return size_; }
  void load(int64_t begin, int64_t end, void* dst) const override;
  void accumulate(int64_t begin, int64_t end, void* inout) const override;
  void store(int64_t begin, int64_t end, const void* src) override;
  std::vector<int64_t> piece_offsets() const override { return {0, size_}; }

 private:
  void* data_;
  int64_t size_;
};

}  // namespace kusari::distributed
