#pragma once
// Internal to the library: a group whose arrays are on a device without NCCL (the loopback device),
// each collective run by an MPI group on host copies and written back: how the NCCL path of
// nccl_allreduce.cpp runs under mpiexec without a GPU (KUSARI_LOOPBACK_NCCL=1), every step of it but
// the NCCL calls themselves.

#include <memory>

#include <kusari/distributed/detail/collective_group.h>

namespace kusari::distributed {

// The collectives of `inner` (over host arrays) on arrays of any one device: operands on a device are
// copied to the host (once), the received ones written back to their device (in place where sent and
// received are one array, as for the NCCL groups).
class StagedCollectiveGroup : public CollectiveGroup {
 public:
  explicit StagedCollectiveGroup(std::unique_ptr<CollectiveGroup> inner) : inner_(std::move(inner)) {}

  void allreduce_sum(const Array& sent, const Array& received) override;
  void allreduce_max(const Array& sent, const Array& received) override;
  void reduce_sum(const Array& sent, const Array& received, int root) override;
  void broadcast(const Array& array, int root) override;
  void reduce_scatter_sum(const Array& sent, const Array& received) override;
  void allgather(const Array& sent, const Array& received) override;
  // The inner groups' all-reduces at once (every group a StagedCollectiveGroup; ValueError otherwise).
  void allreduce_sums_at_once(const std::vector<CollectiveGroup*>& groups, const std::vector<Array>& shares) override;
  int size() const override { return inner_->size(); }

 private:
  std::unique_ptr<CollectiveGroup> inner_;
};

}  // namespace kusari::distributed
