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

// Sums arrays across ranks with the communicator's algorithm, scaled by `scaling` or, when it is
// not given, averaged under the options' policy; `op` names the caller. One CUDA device's arrays go
// through NCCL instead.
void fused_allreduce(Communicator::Impl& impl, const std::vector<Array>& arrays, std::optional<WireScaling> scaling,
                     const char* op) {
  if (nccl_fused_allreduce(impl, arrays, scaling, op)) return;
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
