// Several NCCL groups' all-reduces at once (detail/nccl_collective_group.h).

#include <kusari/distributed/detail/nccl_collective_group.h>

#include <kusari/core/error.h>

namespace kusari::distributed {

void NcclCollectiveGroup::allreduce_sums_at_once(const std::vector<CollectiveGroup*>& groups,
                                                 const std::vector<Array>& shares) {
  if (groups.empty() || groups[0] != this) {
    throw ValueError("ncclAllReduce (groups at once): expected this group first among the groups");
  }
  std::vector<kernels::cuda::NcclGroup*> nccl_groups;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto* group = dynamic_cast<const NcclCollectiveGroup*>(groups[i]);
    if (!group) throw ValueError(cat("ncclAllReduce (groups at once): group ", i, " is not an NCCL group"));
    nccl_groups.push_back(group->group_.get());
  }
  kernels::cuda::NcclGroup::allreduce_sums_at_once(nccl_groups, shares);
}

}  // namespace kusari::distributed
