// Collectives on host copies, written back (detail/staged_collective_group.h).

#include <kusari/distributed/detail/staged_collective_group.h>

#include <kusari/core/error.h>

namespace kusari::distributed {
namespace {

// Whether a and b are one view (a collective in place).
bool same_view(const Array& a, const Array& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.shape() == b.shape() && a.strides() == b.strides();
}

// A host copy of `array` (contiguous).
Array host_copy(const Array& array) { return array.to(Device::cpu()).copy(); }

// `array` = the host array `host`, on array's device.
void write_back(const Array& host, const Array& array) { array.assign(host.to(array.device())); }

// The sent and received operands on the host: one copy when they are one view.
struct HostPair {
  HostPair(const Array& sent, const Array& received)
      : sent(host_copy(sent)), received(same_view(sent, received) ? this->sent : host_copy(received)) {}
  Array sent;
  Array received;
};

}  // namespace

void StagedCollectiveGroup::allreduce_sum(const Array& sent, const Array& received) {
  const HostPair host(sent, received);
  inner_->allreduce_sum(host.sent, host.received);
  write_back(host.received, received);
}

void StagedCollectiveGroup::allreduce_max(const Array& sent, const Array& received) {
  const HostPair host(sent, received);
  inner_->allreduce_max(host.sent, host.received);
  write_back(host.received, received);
}

void StagedCollectiveGroup::reduce_sum(const Array& sent, const Array& received, int root) {
  const HostPair host(sent, received);
  inner_->reduce_sum(host.sent, host.received, root);
  write_back(host.received, received);  // the other ranks' is their own, unchanged
}

void StagedCollectiveGroup::broadcast(const Array& array, int root) {
  const Array host = host_copy(array);
  inner_->broadcast(host, root);
  write_back(host, array);
}

void StagedCollectiveGroup::reduce_scatter_sum(const Array& sent, const Array& received) {
  const HostPair host(sent, received);
  inner_->reduce_scatter_sum(host.sent, host.received);
  write_back(host.received, received);
}

void StagedCollectiveGroup::allgather(const Array& sent, const Array& received) {
  const HostPair host(sent, received);
  inner_->allgather(host.sent, host.received);
  write_back(host.received, received);
}

void StagedCollectiveGroup::allreduce_sums_at_once(const std::vector<CollectiveGroup*>& groups,
                                                   const std::vector<Array>& shares) {
  std::vector<CollectiveGroup*> inner;
  std::vector<Array> host;
  for (size_t i = 0; i < groups.size(); ++i) {
    auto* staged = dynamic_cast<StagedCollectiveGroup*>(groups[i]);
    if (!staged) throw ValueError(cat("allreduce_sums_at_once (staged): group ", i, " is not a staged group"));
    inner.push_back(staged->inner_.get());
  }
  for (const Array& share : shares) host.push_back(host_copy(share));
  if (inner.empty() || groups[0] != this) {
    throw ValueError("allreduce_sums_at_once (staged): expected this group first among the groups");
  }
  inner_->allreduce_sums_at_once(inner, host);
  for (size_t i = 0; i < shares.size(); ++i) write_back(host[i], shares[i]);
}

}  // namespace kusari::distributed
