// The communicator's NCCL path: one GPU's arrays on every rank summed by NCCL on the device, the
// communicator's algorithm mapped by nccl_pattern onto its composition of NCCL group collectives
// (detail/group_allreduce.h: NCCL's own all-reduce over every rank, the hierarchical and two-dimensional
// patterns over intra- and inter-node groups, multi_color's colors at once; hybrid takes NCCL's own or
// hierarchical by size, as on a CPU); the average itself, its wire dtype and scaling, is
// detail/group_average.h's, on the device. With KUSARI_LOOPBACK_NCCL=1 loopback arrays take it too, MPI
// groups on host copies standing in for NCCL's, so that the suite runs it under mpiexec without a GPU.

#include <kusari/distributed/detail/communicator_impl.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include <kusari/distributed/detail/group_average.h>
#include <kusari/distributed/detail/mpi_collective_group.h>
#include <kusari/distributed/detail/mpi_exit.h>
#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/nccl_collective_group.h>
#include <kusari/distributed/detail/nccl_pattern.h>
#include <kusari/distributed/detail/rank_agreement.h>
#include <kusari/distributed/detail/staged_collective_group.h>
#include <kusari/distributed/detail/stall_inspector.h>
#include <kusari/kernels/cuda/runtime.h>
#include <kusari/kernels/routines.h>

namespace kusari::distributed {
namespace {

// Whether loopback arrays take this path too, MPI groups on host copies standing in for NCCL's
// (KUSARI_LOOPBACK_NCCL=1): how the suite runs it under mpiexec without a GPU.
bool loopback_stands_in() {
  const char* value = std::getenv("KUSARI_LOOPBACK_NCCL");
  return value && std::string(value) == "1";
}

// Whether some arrays may take this path in this process: a build with NCCL, or loopback standing in.
bool path_available() { return kernels::cuda::nccl_available() || loopback_stands_in(); }

// The device every array is on, when they all are on one that this path serves: a CUDA device in a
// build with NCCL, or the loopback device standing in.
std::optional<Device> common_group_device(const std::vector<Array>& arrays) {
  if (arrays.empty()) return std::nullopt;
  const Device device = arrays[0].defined() ? arrays[0].device() : Device::cpu();
  const bool served = device.type == DeviceType::cuda ? kernels::cuda::nccl_available()
                                                       : device.type == DeviceType::loopback && loopback_stands_in();
  if (!served) return std::nullopt;
  for (const Array& a : arrays) {
    if (!a.defined() || !(a.device() == device)) return std::nullopt;
  }
  return device;
}

// Where this path is available, makes every rank take the same path (NCCL for one GPU's arrays, MPI
// otherwise) and, on the NCCL path, the device its groups serve and the same element count: ValueError
// or ShapeError on every rank otherwise. Returns the device when the path is NCCL's.
std::optional<Device> agreed_group_device(Communicator::Impl& impl, const std::vector<Array>& arrays, const char* op) {
  if (!path_available()) return std::nullopt;
  const std::optional<Device> device = common_group_device(arrays);
  const int64_t moved = device && impl.nccl && !(impl.nccl->device == *device);
  // A collective like the rest: the stall inspector watches it (a rank that never comes is reported and,
  // past KUSARI_STALL_TIMEOUT, ends the job).
  const CollectiveScope scope(impl.channel, op, " (agreeing on the NCCL or MPI path)");
  int64_t total = 0;  // counted on the path only: the MPI path compares its own sizes
  if (device) {
    for (const Array& a : arrays) total += a.size();
  }
  // One allgather: the path, then the element count (NCCL would overrun a smaller buffer).
  require_same_values_and_count(impl.groups.all(), {device ? 1 : 0, moved},
                                {"whether the arrays are on one GPU (the NCCL path)",
                                 "whether the arrays moved to another GPU than the communicator's NCCL group"},
                                op, [](size_t, int64_t v) { return std::string(v ? "yes" : "no"); }, total,
                                "buffer sizes (elements)");
  if (!device) return device;
  if (moved) {
    throw DeviceError(cat(op, ": this communicator's NCCL groups serve ", impl.nccl->device, ", got arrays on ",
                          *device, " (one device per rank and communicator)"));
  }
  return device;
}

// Throws ValueError on every rank of `comm` when two of its ranks on one node use one GPU (NCCL refuses
// that), naming the node's devices.
void require_own_gpus(MPI_Comm comm, int device) {
  CommHandle node_handle;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node_handle.out()),
            "MPI_Comm_split_type");
  const MPI_Comm node = node_handle.get();
  int node_size = 0;
  check_mpi(MPI_Comm_size(node, &node_size), "MPI_Comm_size");
  std::vector<int> devices(static_cast<size_t>(node_size));
  check_mpi(MPI_Allgather(&device, 1, MPI_INT, devices.data(), 1, MPI_INT, node), "MPI_Allgather");
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  int shared = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  if (!shared) return;
  std::string used;
  for (const int d : devices) used += cat(used.empty() ? "" : ", ", "cuda:", d);
  throw ValueError(cat("allreduce_grad: ranks of one node share a GPU (this node's ranks use ", used,
                       "; every rank sees the same verdict); NCCL needs one GPU per rank: start at most as many "
                       "ranks per node as it has GPUs"));
}

// An NCCL group over the ranks of `comm` (collective over comm), for `device`, its collectives watched
// on the device with the stall inspector's settings: a late one is reported, and past
// KUSARI_STALL_TIMEOUT the job ends as the inspector ends it.
std::unique_ptr<CollectiveGroup> nccl_group_over(MPI_Comm comm, int device) {
  int rank = 0, size = 0, world_rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "MPI_Comm_rank");
  const StallSettings stall = stall_settings_from_environment();
  return std::make_unique<NcclCollectiveGroup>(std::make_unique<kernels::cuda::NcclGroup>(
      rank, size, device,
      [&](void* bytes, size_t n) {
        check_mpi(MPI_Bcast(bytes, static_cast<int>(n), MPI_BYTE, 0, comm), "MPI_Bcast (NCCL unique id)");
      },
      kernels::cuda::WatchSettings{stall.warning_seconds, stall.timeout_seconds, cat("rank ", world_rank)}, end_job_with));
}

// The NCCL groups of the communicator for `device`, made on the first call (collective: every rank makes
// them at the same collective) after checking that no two ranks of a node share a GPU (in the host
// emulation each process's cuda:0 is its own, and the emulation's NCCL joins them); for the loopback
// device standing in, MPI groups on host copies.
NcclGroups& nccl_groups_for(Communicator::Impl& impl, const Device& device) {
  if (impl.nccl) return *impl.nccl;
  auto groups = std::make_unique<NcclGroups>();
  groups->device = device;
  if (device.type == DeviceType::cuda) {
    if (!cuda::emulated()) require_own_gpus(impl.groups.all(), device.index);
    groups->groups = make_allreduce_groups(impl.name, impl.options, impl.groups, [&](MPI_Comm comm) {
      return nccl_group_over(comm, device.index);
    });
  } else {
    groups->groups = make_allreduce_groups(impl.name, impl.options, impl.groups, [](MPI_Comm comm) {
      return std::make_unique<StagedCollectiveGroup>(std::make_unique<MpiCollectiveGroup>(comm));
    });
  }
  impl.nccl = std::move(groups);
  return *impl.nccl;
}

}  // namespace

bool nccl_fused_allreduce(Communicator::Impl& impl, const std::vector<Array>& arrays,
                          std::optional<WireScaling> scaling, const char* op) {
  const std::optional<Device> device = agreed_group_device(impl, arrays, op);
  if (!device) return false;
  std::vector<Array> flat;
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (!is_floating(arrays[i].dtype())) {
      throw DtypeError(cat(op, ": expected floating arrays, got ", arrays[i].dtype(), " at index ", i));
    }
    flat.push_back(arrays[i].reshape({arrays[i].size()}).astype(Dtype::float32));
  }
  const CollectiveScope scope(impl.channel, op, " of ", arrays.size(), " arrays through NCCL");
  // One contiguous float32 array (the multi-node optimizer's bucket) on a float32 wire without a
  // prescale is summed in its own memory; otherwise NCCL sums a scaled or narrowed copy.
  const bool in_place = arrays.size() == 1 && arrays[0].dtype() == Dtype::float32 && arrays[0].is_contiguous();
  Array fused = in_place ? flat[0] : ops::concatenate(flat, 0);
  const Dtype wire = impl.options.wire_dtype;
  if (fused.size() == 0) return true;  // every rank's is empty (the sizes agreed): no group is needed
  const NcclPattern pattern = nccl_pattern(impl.name, impl.options, fused.size() * static_cast<int64_t>(itemsize(wire)));
  fused = average_over_groups(pattern, nccl_groups_for(impl, *device).groups, fused, wire, impl.options.averaging,
                              scaling, impl.groups.topology().size);
  if (in_place && fused.storage() == arrays[0].storage()) return true;
  int64_t at = 0;
  for (const Array& array : arrays) {
    array.assign(fused.get_item({Slice{at, at + array.size()}}).reshape(array.shape()));
    at += array.size();
  }
  return true;
}

}  // namespace kusari::distributed
