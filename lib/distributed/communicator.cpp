// Communicator: argument checks, host staging of arrays, and the MPI calls behind each collective.

#include <kusari/distributed/detail/communicator_impl.h>

#include <kusari/core/timeline.h>
#include <kusari/links/link.h>
#include <kusari/distributed/abort_on_exception.h>
#include <kusari/distributed/detail/array_list_buffer.h>
#include <kusari/distributed/detail/collectives.h>
#include <kusari/distributed/detail/communicator_checks.h>
#include <kusari/distributed/mpi_interop.h>
#include <kusari/distributed/mpi_session.h>
#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/rank_agreement.h>
#include <kusari/distributed/detail/wire_format.h>
#include <kusari/distributed/detail/wire_scaling.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <kusari/kernels/routines.h>

namespace kusari::distributed {
namespace {

// The contiguous host array MPI reads and writes for `array`: the array itself when it is one, else a
// copy (of a device's array too: this path stages device memory through the host), which write_back
// returns.
Array host_work(const Array& array) {
  if (array.device().type != DeviceType::cpu) return array.to(Device::cpu());
  return array.is_contiguous() ? array : array.copy();
}

// Copies the results from a staging array back into the caller's array (on its device) when they differ.
void write_back(const Array& work, const Array& original) {
  if (work.storage() != original.storage()) {
    original.assign(work.device() == original.device() ? work : work.to(original.device()));
  }
}

// `result`, computed on the host, on the device of the array it was computed from.
Array on_device_of(const Array& result, const Array& source) {
  return result.device() == source.device() ? result : result.to(source.device());
}

// The largest magnitude over every rank's arrays (inf when any rank has an inf or NaN).
float agreed_max_abs(const std::vector<Array>& arrays, MPI_Comm comm) {
  float largest = 0;
  for (const Array& array : arrays) largest = std::max(largest, wire::max_abs(array.data<float>(), array.size()));
  allreduce_elements(&largest, 1, Dtype::float32, ReduceOp::max, comm);
  return largest;
}

// The CUDA device every array is on, when they all are on one and this build has NCCL.
std::optional<int> common_cuda_device(const std::vector<Array>& arrays) {
  if (!kernels::cuda::nccl_available() || arrays.empty()) return std::nullopt;
  const Device device = arrays[0].defined() ? arrays[0].device() : Device::cpu();
  if (device.type != DeviceType::cuda) return std::nullopt;
  for (const Array& a : arrays) {
    if (!a.defined() || !(a.device() == device)) return std::nullopt;
  }
  return device.index;
}

// In a build with NCCL, makes every rank take the same path (NCCL for one GPU's arrays, MPI otherwise)
// and, on the NCCL path, the device its group serves and the same element count: ValueError or
// ShapeError on every rank otherwise. Returns the device when the path is NCCL's.
std::optional<int> agreed_nccl_device(Communicator::Impl& impl, const std::vector<Array>& arrays, const char* op) {
  if (!kernels::cuda::nccl_available()) return std::nullopt;
  const std::optional<int> device = common_cuda_device(arrays);
  const int64_t moved = device && impl.nccl && impl.nccl->device() != *device;
  // A collective like the rest: the stall inspector watches it (a rank that never comes is reported and,
  // past KUSARI_STALL_TIMEOUT, ends the job).
  const CollectiveScope scope(impl.channel, op, " (agreeing on the NCCL or MPI path)");
  require_same_values(impl.groups.all(), {device ? 1 : 0, moved},
                      {"whether the arrays are on one GPU (the NCCL path)",
                       "whether the arrays moved to another GPU than the communicator's NCCL group"},
                      op, [](size_t, int64_t v) { return std::string(v ? "yes" : "no"); });
  if (!device) return device;
  int64_t total = 0;
  for (const Array& a : arrays) total += a.size();
  require_same_count(impl.groups.all(), 0, total, op, "buffer sizes (elements)");  // NCCL would overrun
  if (moved) {
    throw DeviceError(cat(op, ": this communicator's NCCL group serves cuda:", impl.nccl->device(),
                          ", got arrays on cuda:", *device, " (one device per rank and communicator)"));
  }
  return device;
}

// fused_allreduce of one CUDA device's floating arrays through NCCL: packed into one float32 buffer on
// the device, scaled as the MPI path scales (the automatic policy's largest magnitude agreed over MPI),
// rounded to the wire dtype, summed by NCCL into a second buffer, widened, scaled and written back.
void nccl_fused_allreduce(Communicator::Impl& impl, const std::vector<Array>& arrays,
                          std::optional<WireScaling> scaling, int device, const char* op) {
  std::vector<Array> flat;
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (!is_floating(arrays[i].dtype())) {
      throw DtypeError(cat(op, ": expected floating arrays, got ", arrays[i].dtype(), " at index ", i));
    }
    flat.push_back(arrays[i].reshape({arrays[i].size()}).astype(Dtype::float32));
  }
  const CollectiveScope scope(impl.channel, op, " of ", arrays.size(), " arrays through NCCL");
  Array fused = ops::concatenate(flat, 0);
  const Dtype wire = impl.options.wire_dtype;
  if (!scaling) {
    const AveragingPolicy policy = impl.options.averaging;
    float largest = 0;
    if (needs_max_abs(policy, wire) && fused.size() > 0) {
      const double local = ops::amax(ops::abs(fused)).item<double>();
      largest = std::isfinite(local) ? static_cast<float>(local) : std::numeric_limits<float>::infinity();
    }
    if (needs_max_abs(policy, wire)) allreduce_elements(&largest, 1, Dtype::float32, ReduceOp::max, impl.groups.all());
    scaling = averaging_scaling(policy, wire, impl.groups.topology().size, largest);
  }
  const Array on_wire = (scaling->prescale == 1 ? fused : fused * static_cast<double>(scaling->prescale)).astype(wire);
  const Array summed = Array::empty(on_wire.shape(), wire, on_wire.device());
  if (on_wire.size() > 0) nccl_for(impl, device).allreduce_sum(on_wire, summed);
  fused = summed.astype(Dtype::float32);
  if (scaling->postscale != 1) fused = fused * static_cast<double>(scaling->postscale);
  int64_t at = 0;
  for (const Array& array : arrays) {
    array.assign(fused.get_item({Slice{at, at + array.size()}}).reshape(array.shape()));
    at += array.size();
  }
}

// Sums arrays across ranks with the communicator's algorithm, scaled by `scaling` or, when it is
// not given, averaged under the options' policy; `op` names the caller. One CUDA device's arrays go
// through NCCL instead.
void fused_allreduce(Communicator::Impl& impl, const std::vector<Array>& arrays, std::optional<WireScaling> scaling,
                     const char* op) {
  if (const std::optional<int> device = agreed_nccl_device(impl, arrays, op)) {
    return nccl_fused_allreduce(impl, arrays, scaling, *device, op);
  }
  std::vector<Array> work;
  work.reserve(arrays.size());
  int64_t total = 0;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const Array& array = arrays[i];
    require_defined_array(array, op);
    if (!is_floating(array.dtype())) {
      throw DtypeError(cat(op, ": expected floating arrays, got ", array.dtype(), " at index ", i));
    }
    const bool on_host = array.device().type == DeviceType::cpu;
    if (on_host && array.dtype() == Dtype::float32 && array.is_contiguous()) {
      work.push_back(array);
    } else {
      const Array staged = on_host ? array : array.to(Device::cpu());
      work.push_back(staged.astype(Dtype::float32, on_host));  // a buffer of its own either way
    }
    total += array.size();
  }
  const CollectiveScope scope(impl.channel, op, " of ", total, " elements");
  if (impl.options.check_sizes) require_same_count(impl.groups.all(), 0, total, op, "buffer sizes (elements)");
  if (total > 0) {
    if (!scaling) {
      const AveragingPolicy policy = impl.options.averaging;
      const Dtype wire = impl.options.wire_dtype;
      const float largest = needs_max_abs(policy, wire) ? agreed_max_abs(work, impl.groups.all()) : 0;
      scaling = averaging_scaling(policy, wire, impl.groups.topology().size, largest);
    }
    ArrayListBuffer buffer(work, *scaling, impl.options.wire_dtype);
    impl.algorithm->run(buffer, impl.groups);
  }
  for (size_t i = 0; i < arrays.size(); ++i) write_back(work[i], arrays[i]);
}

// Broadcasts one array's elements from root without checking sizes.
void bcast_elements(const Array& array, int root, MPI_Comm comm) {
  const Array work = host_work(array);
  bcast_bytes(work.host_data(), work.nbytes(), root, comm);
  write_back(work, array);
}

// Throws ValueError on every rank unless the ranks of comm asked for the same algorithm and options.
void require_same_settings(MPI_Comm comm, const std::string& name, const CommunicatorOptions& options) {
  const std::vector<std::string> names = allreduce_algorithm_names();
  const auto known = std::find(names.begin(), names.end(), name);
  const int64_t algorithm = known == names.end() ? -1 : known - names.begin();
  // A bad KUSARI_RANKS_PER_NODE throws later, in CommGroups, on every rank that has it; a rank must not
  // throw here while the others enter the allgather.
  int per_node = options.ranks_per_node;
  if (per_node <= 0) {
    try {
      per_node = ranks_per_node_from_env();
    } catch (const Error&) {
      per_node = -1;
    }
  }
  const std::vector<int64_t> values = {algorithm, static_cast<int64_t>(options.wire_dtype),
                                       static_cast<int64_t>(options.averaging), per_node, options.chunk_bytes,
                                       options.pipeline_depth, options.colors, options.hybrid_threshold_bytes,
                                       options.check_sizes};
  const std::vector<std::string> labels = {"the algorithm", "wire_dtype", "averaging", "ranks_per_node",
                                           "chunk_bytes", "pipeline_depth", "colors", "hybrid_threshold_bytes",
                                           "check_sizes"};
  require_same_values(comm, values, labels, "create_communicator", [&](size_t i, int64_t v) -> std::string {
    switch (i) {
      case 0: return v < 0 ? "an unknown name" : names[static_cast<size_t>(v)];
      case 1: return dtype_name(static_cast<Dtype>(v));
      case 2: return averaging_policy_name(static_cast<AveragingPolicy>(v));
      case 3: return v < 0 ? "an invalid KUSARI_RANKS_PER_NODE" : std::to_string(v);
      case 8: return v ? "true" : "false";
      default: return std::to_string(v);
    }
  });
}

}  // namespace

Communicator::Impl::Impl(MPI_Comm comm, std::string name_, const CommunicatorOptions& options_)
    : name(std::move(name_)),
      options(options_),
      algorithm(make_allreduce_algorithm(name, options)),
      groups(comm, options.ranks_per_node > 0 ? options.ranks_per_node : ranks_per_node_from_env()),
      channel(groups.all()) {
  algorithm->check_topology(groups.topology());
  check_mpi(MPI_Comm_dup(groups.all(), point_to_point.out()), "MPI_Comm_dup");
  int* bound = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &bound, &found), "MPI_Comm_get_attr");
  max_tag = found ? *bound : 32767;
}

int Communicator::rank() const { return topology().rank; }
int Communicator::size() const { return topology().size; }
int Communicator::intra_rank() const { return topology().intra_rank; }
int Communicator::intra_size() const { return topology().intra_size; }
int Communicator::inter_rank() const { return topology().inter_rank; }
int Communicator::inter_size() const { return topology().inter_size; }
const Topology& Communicator::topology() const { return impl_->groups.topology(); }
const std::string& Communicator::algorithm() const { return impl_->name; }
const CommunicatorOptions& Communicator::options() const { return impl_->options; }

void Communicator::allreduce_grad(const std::vector<Array>& grads) const {
  fused_allreduce(*impl_, grads, std::nullopt, "allreduce_grad");
}

void Communicator::allreduce_sum(const std::vector<Array>& arrays, double prescale, double postscale) const {
  fused_allreduce(*impl_, arrays, WireScaling{static_cast<float>(prescale), static_cast<float>(postscale)},
                  "allreduce_sum");
}

Array Communicator::allreduce(const Array& array, ReduceOp op) const {
  return reduce_across_ranks(*impl_, array, op, impl_->options.check_sizes);
}

kernels::cuda::NcclGroup& nccl_for(Communicator::Impl& impl, int device) {
  if (impl.nccl) return *impl.nccl;
  const MPI_Comm all = impl.groups.all();
  // NCCL needs one GPU per rank: the ranks of each node (those sharing memory) compare their devices.
  CommHandle node_handle;
  check_mpi(MPI_Comm_split_type(all, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node_handle.out()),
            "MPI_Comm_split_type");
  const MPI_Comm node = node_handle.get();
  int node_size = 0;
  check_mpi(MPI_Comm_size(node, &node_size), "MPI_Comm_size");
  std::vector<int> devices(static_cast<size_t>(node_size));
  check_mpi(MPI_Allgather(&device, 1, MPI_INT, devices.data(), 1, MPI_INT, node), "MPI_Allgather");
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  int shared = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end() ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, all), "MPI_Allreduce");
  if (shared) {
    std::string used;
    for (const int d : devices) used += cat(used.empty() ? "" : ", ", "cuda:", d);
    throw ValueError(cat("allreduce_grad: ranks of one node share a GPU (this node's ranks use ", used,
                         "; every rank sees the same verdict); NCCL needs one GPU per rank: start at most as many "
                         "ranks per node as it has GPUs"));
  }
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(all, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(all, &size), "MPI_Comm_size");
  impl.nccl = std::make_unique<kernels::cuda::NcclGroup>(rank, size, device, [&](void* bytes, size_t n) {
    check_mpi(MPI_Bcast(bytes, static_cast<int>(n), MPI_BYTE, 0, all), "MPI_Bcast (NCCL unique id)");
  });
  return *impl.nccl;
}

Array reduce_across_ranks(Communicator::Impl& impl, const Array& array, ReduceOp op, bool compare_layout) {
  require_defined_array(array, "allreduce");
  const CollectiveScope scope = impl.scope("allreduce");
  const MPI_Comm comm = impl.groups.all();
  if (compare_layout) require_same_layout(comm, 0, array.size(), array.dtype(), "allreduce", "element counts");
  Array out = array.device().type == DeviceType::cpu ? array.copy() : array.to(Device::cpu());
  allreduce_elements(out.host_data(), out.size(), out.dtype(), op, comm);
  return on_device_of(out, array);
}

void Communicator::bcast(const Array& array, int root) const {
  require_defined_array(array, "bcast");
  require_root(root, size(), "bcast");
  const CollectiveScope scope = impl_->scope("bcast");
  const MPI_Comm comm = impl_->groups.all();
  require_same_layout(comm, root, array.size(), array.dtype(), "bcast", "element counts");
  bcast_elements(array, root, comm);
}

void Communicator::bcast_data(const links::Link& link, int root) const {
  require_root(root, size(), "bcast_data");
  const CollectiveScope scope = impl_->scope("bcast_data");
  const MPI_Comm comm = impl_->groups.all();
  const auto params = link.namedparams();
  require_same_count(comm, root, static_cast<int64_t>(params.size()), "bcast_data", "parameter counts");
  for (const auto& [name, param] : params) {
    const Array& data = param.data();
    require_defined_array(data, "bcast_data");
    require_same_layout(comm, root, data.size(), data.dtype(), "bcast_data", "sizes of parameter " + name);
    bcast_elements(data, root, comm);
  }
}

Array Communicator::allgather(const Array& array) const {
  require_defined_array(array, "allgather");
  const CollectiveScope scope = impl_->scope("allgather");
  const MPI_Comm comm = impl_->groups.all();
  require_same_layout(comm, 0, array.size(), array.dtype(), "allgather", "element counts");
  Shape shape{size()};
  for (int64_t extent : array.shape()) shape.push_back(extent);
  Array out = Array::empty(shape, array.dtype(), Device::cpu());
  const Array work = host_work(array);
  const int count = mpi_count(work.nbytes(), "allgather");
  check_mpi(MPI_Allgather(work.host_data(), count, MPI_BYTE, out.host_data(), count, MPI_BYTE, comm), "MPI_Allgather");
  return on_device_of(out, array);
}

std::string Communicator::bcast_obj(const std::string& bytes, int root) const {
  require_root(root, size(), "bcast_obj");
  const CollectiveScope scope = impl_->scope("bcast_obj");
  const MPI_Comm comm = impl_->groups.all();
  int64_t length = static_cast<int64_t>(bytes.size());
  check_mpi(MPI_Bcast(&length, 1, MPI_INT64_T, root, comm), "MPI_Bcast");
  std::string out = rank() == root ? bytes : std::string(static_cast<size_t>(length), '\0');
  bcast_bytes(out.data(), length, root, comm);
  return out;
}

std::vector<std::string> Communicator::gather_obj(const std::string& bytes, int root) const {
  require_root(root, size(), "gather_obj");
  const CollectiveScope scope = impl_->scope("gather_obj");
  const MPI_Comm comm = impl_->groups.all();
  const int length = mpi_count(static_cast<int64_t>(bytes.size()), "gather_obj");
  const bool is_root = rank() == root;
  std::vector<int> lengths(is_root ? static_cast<size_t>(size()) : 0);
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm), "MPI_Gather");
  std::vector<int> offsets(lengths.size());
  int64_t total = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = mpi_count(total, "gather_obj");
    total += lengths[i];
  }
  std::string gathered(static_cast<size_t>(mpi_count(total, "gather_obj")), '\0');
  check_mpi(MPI_Gatherv(bytes.data(), length, MPI_CHAR, gathered.data(), lengths.data(), offsets.data(), MPI_CHAR, root,
                        comm),
            "MPI_Gatherv");
  std::vector<std::string> out;
  for (size_t i = 0; i < lengths.size(); ++i) {
    out.push_back(gathered.substr(static_cast<size_t>(offsets[i]), static_cast<size_t>(lengths[i])));
  }
  return out;
}

void Communicator::barrier() const {
  const CollectiveScope scope = impl_->scope("barrier");
  check_mpi(MPI_Barrier(impl_->groups.all()), "MPI_Barrier");
}

Communicator Communicator::split(int color, int key) const {
  if (color < 0) throw ValueError(cat("split: expected a color of 0 or more, got ", color));
  CommHandle part;
  const CollectiveScope scope = impl_->scope("split");
  check_mpi(MPI_Comm_split(impl_->groups.all(), color, key, part.out()), "MPI_Comm_split");
  return create_communicator(impl_->name, impl_->options, part.get());
}

Communicator create_communicator(const std::string& name, const CommunicatorOptions& options, MPI_Comm comm) {
  require_same_settings(comm, name, options);
  check_communicator_options(options);
  if (options.abort_on_uncaught_exception) install_abort_on_uncaught_exception();
  int relation = MPI_UNEQUAL;
  check_mpi(MPI_Comm_compare(comm, MPI_COMM_WORLD, &relation), "MPI_Comm_compare");
  if (relation == MPI_IDENT || relation == MPI_CONGRUENT) {
    start_stall_inspector();
    timeline::set_rank(world_rank());
  }
  return Communicator(std::make_shared<Communicator::Impl>(comm, name, options));
}

Communicator create_communicator(const std::string& name, const CommunicatorOptions& options) {
  ensure_mpi_initialized();
  return create_communicator(name, options, MPI_COMM_WORLD);
}

MPI_Comm mpi_comm(const Communicator& communicator) { return communicator.impl().groups.all(); }

}  // namespace kusari::distributed
