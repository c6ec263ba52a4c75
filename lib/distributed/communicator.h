#pragma once
// Communicator: the collective operations data-parallel training needs (gradient averaging with a
// choice of all-reduce algorithms and wire dtypes, broadcasts, gathers) and the point-to-point
// messages model parallelism needs, over MPI.

#include <memory>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/array.h>
#include <kusari/distributed/communicator_options.h>
#include <kusari/distributed/reduce_op.h>
#include <kusari/distributed/topology.h>

namespace kusari::links {
class Link;
}

namespace kusari::distributed {

// A group of ranks and an all-reduce algorithm. Every method but send and recv is collective: all
// ranks of the communicator call it in the same order with matching arguments; sizes are compared
// across ranks first where a mismatch could otherwise hang or corrupt, and every rank then throws the
// same error.
// Copies are handles to one communicator; one communicator must not be used by two threads at once.
// Arrays must live on the CPU.
class KUSARI_API Communicator {
 public:
  // Rank of this process, in [0, size()).
  int rank() const;
  // Number of ranks.
  int size() const;
  // Rank inside this node.
  int intra_rank() const;
  // Ranks on this node.
  int intra_size() const;
  // Index of this node.
  int inter_rank() const;
  // Number of nodes.
  int inter_size() const;
  // All of the above.
  const Topology& topology() const;
  // Name of the all-reduce algorithm allreduce_grad uses.
  const std::string& algorithm() const;
  // The settings the communicator was created with.
  const CommunicatorOptions& options() const;

  // Replaces each array by its mean over the ranks, in place (the algorithm, wire dtype and averaging
  // policy of the options: see AveragingPolicy for where the division by size() happens).
  void allreduce_grad(const std::vector<Array>& grads) const;
  // Replaces each array by postscale · Σ_ranks (prescale · array), in place, like allreduce_grad
  // (prescale is applied before the values are cast to the wire dtype, postscale after the sum).
  void allreduce_sum(const std::vector<Array>& arrays, double prescale = 1, double postscale = 1) const;
  // The elementwise reduction of `array` over the ranks, in its own dtype (float16/bfloat16 computed
  // in float32), as a new contiguous array.
  Array allreduce(const Array& array, ReduceOp op = ReduceOp::sum) const;
  // Overwrites `array` on every rank with root's values.
  void bcast(const Array& array, int root = 0) const;
  // Overwrites every parameter of `link` with root's, visiting parameters in sorted name order.
  void bcast_data(const links::Link& link, int root = 0) const;
  // Every rank's `array` stacked along a new first axis: shape (size(), ...array.shape()).
  Array allgather(const Array& array) const;
  // Root's `bytes` on every rank (the argument is ignored elsewhere).
  std::string bcast_obj(const std::string& bytes, int root = 0) const;
  // Every rank's `bytes` in rank order at root; an empty list elsewhere.
  std::vector<std::string> gather_obj(const std::string& bytes, int root = 0) const;
  // The sum over the ranks of each rank's slice stacked[rank()]: `stacked` has the shape (size(), ...)
  // and dtype on every rank; the result has shape stacked.shape()[1:] (float16/bfloat16 summed in float32).
  Array reduce_scatter(const Array& stacked) const;
  // Sends arrays[k] to rank k (size() arrays, whose shapes and dtypes may differ; at most 2 GiB in
  // all) and returns, at index k, the array rank k sent to this rank.
  std::vector<Array> alltoall(const std::vector<Array>& arrays) const;
  // Sends `array`, with its shape and dtype, to rank `dest` (not this rank); blocks until `array` may be
  // modified again, which for a large array is when dest receives it. Point-to-point messages never
  // meet the collectives' ones; those from one rank with one tag arrive in the order they were sent.
  void send(const Array& array, int dest, int tag = 0) const;
  // Receives the next array rank `source` sent to this rank with `tag`, as a new contiguous array.
  Array recv(int source, int tag = 0) const;
  // Like recv, but throws ShapeError (DtypeError when only the dtype differs) naming the expected and
  // the received shape and dtype unless they are `shape` and `dtype`; the message is consumed anyway.
  Array recv(int source, int tag, const Shape& shape, Dtype dtype) const;
  // The largest tag send and recv accept (MPI's bound, at least 32767).
  int max_tag() const;
  // Waits until every rank has called barrier().
  void barrier() const;
  // A communicator of the ranks that passed the same color (>= 0), ordered by key then rank, with
  // this communicator's algorithm and options.
  Communicator split(int color, int key) const;

  struct Impl;
  // Wraps an implementation (used by create_communicator).
  explicit Communicator(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  // The implementation (for kusari's own MPI-level code).
  Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

// A communicator over MPI_COMM_WORLD (initialising MPI if needed) whose allreduce_grad uses the
// algorithm `name`: naive, flat, ring, hierarchical, two_dimensional, multi_color or hybrid.
// Collective; throws ValueError for an unknown name or bad options.
KUSARI_API Communicator create_communicator(const std::string& name = "hybrid", const CommunicatorOptions& options = {});
// The algorithm names create_communicator accepts.
KUSARI_API std::vector<std::string> allreduce_algorithm_names();
// Throws ValueError when the algorithm `name` with `options` has no NCCL form for CUDA arrays: naive and
// ring (kusari's engines over host memory; nccl is NCCL's ring), or chunk_bytes or pipeline_depth changed.
KUSARI_API void check_cuda_communicator(const std::string& name, const CommunicatorOptions& options);

}  // namespace kusari::distributed
