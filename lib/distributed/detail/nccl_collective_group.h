#pragma once
// Internal to the library: the collectives of detail/collective_group.h over an NCCL group, on one
// GPU's arrays.

#include <memory>

#include <kusari/distributed/detail/collective_group.h>
#include <kusari/kernels/cuda/detail/nccl_group.h>

namespace kusari::distributed {

// An NCCL group's ranks summing arrays of its GPU (float32, float16, bfloat16; NCCL sums the half types
// in their own precision), queued in order with the caller's stream.
class NcclCollectiveGroup : public CollectiveGroup {
 public:
  explicit NcclCollectiveGroup(std::unique_ptr<kernels::cuda::NcclGroup> group) : group_(std::move(group)) {}

  void allreduce_sum(const Array& sent, const Array& received) override { group_->allreduce_sum(sent, received); }
  void allreduce_max(const Array& sent, const Array& received) override { group_->allreduce_max(sent, received); }
  void reduce_sum(const Array& sent, const Array& received, int root) override {
    group_->reduce_sum(sent, received, root);
  }
  void broadcast(const Array& array, int root) override { group_->broadcast(array, root); }
  void reduce_scatter_sum(const Array& sent, const Array& received) override {
    group_->reduce_scatter_sum(sent, received);
  }
  void allgather(const Array& sent, const Array& received) override { group_->allgather(sent, received); }
  // One NCCL group call, each group on a stream of its own.
  void allreduce_sums_at_once(const std::vector<CollectiveGroup*>& groups, const std::vector<Array>& shares) override;
  int size() const override { return group_->size(); }

 private:
  std::unique_ptr<kernels::cuda::NcclGroup> group_;
};

}  // namespace kusari::distributed
