#pragma once
// GradientBuckets: the parameters of a model cut into buckets of fused gradients, in the order their
// gradients become final in backward, and the packing and unpacking of one bucket. Internal header.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <kusari/autograd/variable.h>

namespace kusari::distributed {

// One parameter's place: its bucket and its slice [offset, offset + size) of the bucket's buffer.
struct BucketSlot {
  std::string name;
  Variable param;
  size_t bucket = 0;
  int64_t offset = 0;
  int64_t size = 0;
};

// The parameters of consecutive slots [first, last) travel together in one float32 buffer.
struct Bucket {
  size_t first = 0;
  size_t last = 0;
  int64_t elements = 0;
  std::string label;  // how the stall inspector names its all-reduce: "bucket 2 of 5, 6291456 bytes"
};

// Parameters in a fixed order (the same on every rank), fused into buckets of at most `bucket_bytes`
// float32 bytes (a larger parameter gets a bucket of its own).
class GradientBuckets {
 public:
  // Buckets over `params` in the order given.
  GradientBuckets(const std::vector<std::pair<std::string, Variable>>& params, int64_t bucket_bytes);

  // Every parameter's slot, in bucket order.
  const std::vector<BucketSlot>& slots() const { return slots_; }
  // Every bucket, in the order they are sent.
  const std::vector<Bucket>& buckets() const { return buckets_; }
  // The slot index of the parameter `name`, if it has one.
  std::optional<size_t> find(const std::string& name) const;

  // Copies the bucket's gradients (sources[k] for its k-th slot) into `buffer` (float32,
  // bucket.elements long, on the sources' device), zeros where a source is undefined. Sources must be
  // float32 and contiguous (see staged_source); a host buffer is filled by memcpy, a device's by copy
  // kernels on that device; either may run on the communication thread.
  void pack(size_t bucket, const std::vector<Array>& sources, const Array& buffer) const;
  // Sets the gradient of each of the bucket's parameters to its slice of `buffer` (copied to the
  // parameter's device and cast to its dtype where those differ).
  void install(size_t bucket, const Array& buffer) const;

 private:
  std::vector<BucketSlot> slots_;
  std::vector<Bucket> buckets_;
  std::unordered_map<std::string, size_t> index_;
};

// The gradient `grad` as pack() reads it: itself when float32 and contiguous, else a float32 copy on its
// device (undefined stays undefined).
Array staged_source(const Array& grad);

}  // namespace kusari::distributed
