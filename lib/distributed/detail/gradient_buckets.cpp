#include <kusari/distributed/detail/gradient_buckets.h>

#include <cstring>

namespace kusari::distributed {

GradientBuckets::GradientBuckets(const std::vector<std::pair<std::string, Variable>>& params, int64_t bucket_bytes) {
  const int64_t capacity = std::max<int64_t>(1, bucket_bytes / static_cast<int64_t>(sizeof(float)));
  for (const auto& [name, param] : params) {
    const int64_t size = param.size();
    if (buckets_.empty() || (buckets_.back().elements > 0 && buckets_.back().elements + size > capacity)) {
      buckets_.push_back({slots_.size(), slots_.size(), 0, {}});
    }
    Bucket& bucket = buckets_.back();
    index_[name] = slots_.size();
    slots_.push_back({name, param, buckets_.size() - 1, bucket.elements, size});
    bucket.elements += size;
    bucket.last = slots_.size();
  }
  for (size_t b = 0; b < buckets_.size(); ++b) {
    buckets_[b].label = cat("bucket ", b + 1, " of ", buckets_.size(), ", ", buckets_[b].elements * 4, " bytes");
  }
}

std::optional<size_t> GradientBuckets::find(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void GradientBuckets::pack(size_t bucket, const std::vector<Array>& sources, const Array& buffer) const {
  const Bucket& b = buckets_[bucket];
  if (buffer.device().type != DeviceType::cpu) {  // a device's buffer: copies on that device
    for (size_t i = b.first; i < b.last; ++i) {
      const BucketSlot& slot = slots_[i];
      const Array piece = buffer.get_item({Slice{slot.offset, slot.offset + slot.size}});
      const Array& source = sources[i - b.first];
      if (source.defined()) {
        piece.assign(source.reshape({slot.size}));
      } else {
        piece.fill(0.0);
      }
    }
    return;
  }
  float* out = static_cast<float*>(buffer.host_data());
  for (size_t i = b.first; i < b.last; ++i) {
    const BucketSlot& slot = slots_[i];
    const Array& source = sources[i - b.first];
    const size_t bytes = static_cast<size_t>(slot.size) * sizeof(float);
    if (source.defined()) {
      std::memcpy(out + slot.offset, source.host_data(), bytes);
    } else {
      std::memset(out + slot.offset, 0, bytes);
    }
  }
}

void GradientBuckets::install(size_t bucket, const Array& buffer) const {
  const Bucket& b = buckets_[bucket];
  for (size_t i = b.first; i < b.last; ++i) {
    const BucketSlot& slot = slots_[i];
    Variable param = slot.param;
    Array grad = buffer.get_item({Slice{slot.offset, slot.offset + slot.size}}).reshape(param.shape());
    if (!(param.data().device() == grad.device())) grad = grad.to(param.data().device());
    if (param.dtype() != Dtype::float32) grad = grad.astype(param.dtype());
    param.set_grad(grad);
  }
}

Array staged_source(const Array& grad) {
  if (!grad.defined() || (grad.dtype() == Dtype::float32 && grad.is_contiguous())) return grad;
  return grad.astype(Dtype::float32, true);
}

}  // namespace kusari::distributed
