// Collectives on host copies, written back (detail/staged_collective_group.h).

#include <kusari/distributed/detail/staged_collective_group.h>

#include <functional>

#include <kusari/core/error.h>

namespace kusari::distributed {
namespace {

// Whether a and b are one view (a collective in place).
bool same_view(const Array& a, const Array& b) {
  return a.storage() == b.storage() && a.offset() == b.offset() && a.shape() == b.shape() && a.strides() == b.strides();
}

// A contiguous host copy of `array` (a device's array is copied once; a host one is used in place).
Array host_copy(const Array& array) { return array.to(Device::cpu()).contiguous(); }

// `array` = the host array `host`, on array's device.
void write_back(const Array& host, const Array& array) { array.assign(host.to(array.device())); }

// Runs `collective` on host copies of sent and received (one copy when they are one view), then writes
// the received copy back.
void on_host(const Array& sent, const Array& received,
             const std::function<void(const Array&, const Array&)>& collective) {
  const Array host_sent = host_copy(sent);
  const Array host_received = same_view(sent, received) ? host_sent : host_copy(received);
  collective(host_sent, host_received);
  write_back(host_received, received);
}

}  // namespace

void StagedCollectiveGroup::allreduce_sum(const Array& sent, const Array& received) {
  on_host(sent, received, [&](const Array& s, const Array& r) { inner_->allreduce_sum(s, r); });
}

void StagedCollectiveGroup::allreduce_max(const Array& sent, const Array& received) {
  on_host(sent, received, [&](const Array& s, const Array& r) { inner_->allreduce_max(s, r); });
}

void StagedCollectiveGroup::reduce_sum(const Array& sent, const Array& received, int root) {
  // The other ranks' `received` is written back unchanged.
  on_host(sent, received, [&](const Array& s, const Array& r) { inner_->reduce_sum(s, r, root); });
}

void StagedCollectiveGroup::broadcast(const Array& array, int root) {
  on_host(array, array, [&](const Array& a, const Array&) { inner_->broadcast(a, root); });
}

void StagedCollectiveGroup::reduce_scatter_sum(const Array& sent, const Array& received) {
  on_host(sent, received, [&](const Array& s, const Array& r) { inner_->reduce_scatter_sum(s, r); });
}

void StagedCollectiveGroup::allgather(const Array& sent, const Array& received) {
  on_host(sent, received, [&](const Array& s, const Array& r) { inner_->allgather(s, r); });
}

void StagedCollectiveGroup::allreduce_sums_at_once(const std::vector<CollectiveGroup*>& groups,
                                                   const std::vector<Array>& shares) {
  if (groups.empty() || groups[0] != this) {
    throw ValueError("allreduce_sums_at_once (staged): expected this group first among the groups");
  }
  std::vector<CollectiveGroup*> inner;
  for (size_t i = 0; i < groups.size(); ++i) {
    auto* staged = dynamic_cast<StagedCollectiveGroup*>(groups[i]);
    if (!staged) throw ValueError(cat("allreduce_sums_at_once (staged): group ", i, " is not a staged group"));
    inner.push_back(staged->inner_.get());
  }
  std::vector<Array> host;
  for (const Array& share : shares) host.push_back(host_copy(share));
  inner_->allreduce_sums_at_once(inner, host);
  for (size_t i = 0; i < shares.size(); ++i) write_back(host[i], shares[i]);
}

}  // namespace kusari::distributed
