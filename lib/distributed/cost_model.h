#pragma once
// A cost model of kusari's all-reduce algorithms: the predicted time of one allreduce_grad call on a
// cluster described by its links (latency α, inverse bandwidth β inside and between nodes) and its
// per-element local costs (γ: packing to the wire, adding into partial sums, unpacking), and of a
// training step's gradient averaging overlapped with backward. Each formula follows the message pattern
// of the algorithm's own code (lib/distributed/detail/ring.cpp and the *_allreduce.cpp files).

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/dtype.h>
#include <kusari/distributed/communicator_options.h>

namespace kusari::distributed::cost {

// The messages in flight at once with which bench/allreduce_calibrate measures a link's beta_streams.
inline constexpr int kStreamsMessages = 16;

// One kind of link: a message of b bytes takes alpha + beta·b seconds, or alpha + beta_memory·b when one
// of its ends is a buffer beyond the caches (on a CPU a copy through memory is slower than between
// buffers the caches hold; a NIC's or a GPU's DMA makes them equal). Messages streaming from memory
// several at once may go faster in all than one: a transport that moves each message below the link's
// rate (Open MPI's TCP here) adds up past it; the copies of one thread do not.
struct KUSARI_API Link {
  double alpha = 0;         // seconds per message
  double beta = 0;          // seconds per byte, between buffers in cache
  double beta_memory = 0;   // seconds per byte of one message at a time with one end in memory (0: beta)
  double beta_streams = 0;  // seconds per byte the link carries in all with kStreamsMessages messages from
                            // memory in flight (0: not measured; a rank's concurrent flows then pay their
                            // memory ends one after another)
};
// The per-byte time of a message with one end in memory: beta_memory, or beta where that is 0.
KUSARI_API double memory_beta(const Link& link);
// Seconds per byte a link carries in all with `messages` from memory in flight at once: memory_beta for
// one, beta_streams from kStreamsMessages on, geometric in between (each doubling of the messages gains
// the same factor; over Open MPI's TCP here 12.6, 10.4 and 8.7 ns/B for 1, 4 and 16, against 14.7, 10.1
// and 8.8 measured with 1 MiB messages);
// memory_beta where beta_streams is not measured; never below beta, never above memory_beta (a
// beta_streams measured slower than one message is taken as no gain).
KUSARI_API double streaming_beta(const Link& link, double messages);

// How MPI runs its collectives here. The factors: how many times the intra-node β MPI's large
// collectives (from_bytes up, beyond the caches) take per byte: MPI's temporary buffers and copies beyond
// the formulas' messages, by collective and op kind (MPI's float32 sum, or kusari's half-precision user op);
// between nodes the same copies add (factor - 1)·β_intra. Smaller buffers follow the formulas, their
// messages from a buffer of 1 MiB up at each link's β_memory (one end beyond the caches, one message at
// a time: over Open MPI's TCP here 12.4 ns/B against β's 8.2), below it at β.
// bench/allreduce_calibrate measures the factors on one node.
struct KUSARI_API MpiFactors {
  double allreduce = 1, allreduce_half = 1, reduce = 1, reduce_half = 1, bcast = 1;
  double from_bytes = 16 << 20;
  // MPI composes its all-reduce over nodes of several ranks by node, as MPICH's ch4 device does for a
  // commutative op on nodes it found itself (not KUSARI_RANKS_PER_NODE's pretend ones); priced by
  // mpi_allreduce_seconds.
  bool by_node = false;
  // MPI is Open MPI: its all-reduce chooses its algorithm as Open MPI's tuned component does; priced by
  // mpi_allreduce_seconds (at most one of by_node and open_mpi: Cluster::check).
  bool open_mpi = false;
};

// The ranks of one communicator as the model sees them: S ranks in nodes of k consecutive ranks (k ≥ S:
// one node), the links inside and between nodes, and how many links a node's concurrent flows share.
struct KUSARI_API Span {
  int ranks = 1;
  int ranks_per_node = 1;
  Link intra, inter;
  int links_per_node = 1;
  MpiFactors mpi;
};

// Seconds per element of the local passes of one wire dtype (lib/distributed/detail/wire_format.h).
struct KUSARI_API WireCosts {
  double pack = 0;        // float32 (scaled) to the wire
  double accumulate = 0;  // this rank's float32 added into a received wire element, rounded back
  double add = 0;         // two wire elements added (inside MPI's reductions and the leaders' ring)
  double unpack = 0;      // the wire back to float32 (scaled)
  double max_abs = 0;     // the float16 averaging policy's scan of the float32 input
};

// A cluster as the model sees it: P ranks in nodes of k, the node's links, and the local costs.
struct KUSARI_API Cluster {
  int ranks = 1;
  int ranks_per_node = 1;
  int links_per_node = 1;  // network links that a node's concurrent inter-node flows share
  Link intra;              // between two ranks of one node
  Link inter;              // between two nodes, per link
  WireCosts float32, float16, bfloat16;
  MpiFactors mpi;
  // The local costs of `wire` (float32, float16 or bfloat16; DtypeError otherwise).
  const WireCosts& local(Dtype wire) const;
  // Number of nodes, P / k (ValueError unless k divides P).
  int nodes() const;
  // ValueError naming the first parameter out of range: the shape (nodes()), links ≥ 1, every α, β,
  // local cost and MPI factor finite and ≥ 0, and not both mpi.by_node and mpi.open_mpi.
  void check() const;
  // All P ranks as one communicator.
  Span all() const;
};

// Messages per step of kusari's pipelined ring over `ranks` ranks for `elements` elements, chunks of
// `chunk_elements`: every segment of ceil(elements / ranks) elements is sent in m = max(1, ceil(segment
// / chunk)) messages (the chunks of ring.cpp's RingStream).
KUSARI_API int64_t ring_messages_per_step(int64_t elements, int ranks, int64_t chunk_elements);

// The phases of kusari's ring engine over S ranks on one link, for n elements of w wire bytes, in
// seconds (multi_color runs several such rings side by side: the slowest color's time). Reduce-scatter:
// S-1 steps of m messages of the segment (n/S elements) each, α per message, every received element
// accumulated; the steps between pooled chunk buffers cost β per byte, the last lands in the owned
// slice's buffer, beyond the caches (β_memory): (S-1)·m·α + n/S·w·((S-2)·β + β_memory) +
// (S-1)/S·n·accumulate. The all-gather forwards what it receives, its first step straight from the owned
// slice: (S-1)·m·α + n/S·w·((S-2)·β + β_memory). A chunk flows on as soon as it is summed, so the phases
// add without a barrier; on one core the copies and the adds do not overlap.
KUSARI_API double ring_reduce_scatter_seconds(int64_t n, int ranks, int wire_bytes, int64_t chunk_elements,
                                              const Link& link, double accumulate);
// The all-gather half of the ring engine (see ring_reduce_scatter_seconds).
KUSARI_API double ring_allgather_seconds(int64_t n, int ranks, int wire_bytes, int64_t chunk_elements,
                                         const Link& link);

// MPICH's MPI_Allreduce of n elements of w bytes (B = n·w) as MPICH chooses, with γ the reduction's cost
// per element and p the largest power of two ≤ S. A built-in op on more than 2048 bytes and at least p
// elements: Rabenseifner's recursive-halving reduce-scatter and its mirror all-gather, 2·log2 p
// exchanges at distances 1, 2, 4, ..., the i-th carrying B/2^(i+1); an exchange at a distance below k stays
// inside the node (nodes of consecutive ranks), one at k or more crosses it with the node's k ranks sharing
// its links (β·max(1, k/L)); (p-1)/p·n·γ. Otherwise recursive doubling: log2 p exchanges of all B at the
// same distances, each reduced (n·γ). Where S is not a power of two, MPICH first folds the extra ranks into
// partners and last returns them the result: two more exchanges of B (one reduced). With span.mpi.by_node on
// a span crossing nodes of k > 1 ranks, the composition by node: mpi_reduce_seconds to the first rank of a
// node's k, this formula over the ⌈S/k⌉ nodes' first ranks (one a node), mpi_bcast_seconds over a node's k.
// With span.mpi.open_mpi (by_node then ignored), Open MPI 4.1's fixed choice for a commutative op, by S
// and B: on 2 or 3 ranks a ring below 8 bytes, from 4096 to 8192 and from 16384 to 262144 (its segmented
// ring, given no segment size, is a ring), recursive doubling elsewhere below 262144, Rabenseifner's from
// there; on 4 to 7 ranks a ring below 16 bytes, recursive doubling below 8192, Rabenseifner's from there;
// on 8 to 15 ranks recursive doubling below 8192, Rabenseifner's from there, and the same from 16 ranks
// (where Open MPI's own rows differ below 256 KiB). Its ring needs n ≥ S and its Rabenseifner n ≥ p, or
// it runs recursive doubling. Its ring: 2(S-1) messages of B/S on the ring's slowest hop, (S-1)/S·n·γ.
// MPI_Reduce and MPI_Bcast are priced as MPICH runs them under either.
KUSARI_API double mpi_allreduce_seconds(int64_t n, int wire_bytes, bool builtin_op, const Span& span, double reduction);
// MPICH's MPI_Reduce to one root, MPI_Allreduce's formula with the reduce factors and one fold step: for a
// built-in op on more than 2048 bytes a reduce-scatter and a binomial gather (the gather moves the
// all-gather's bytes in as many messages), otherwise a binomial tree (the log2 p steps of recursive
// doubling, each reduced).
KUSARI_API double mpi_reduce_seconds(int64_t n, int wire_bytes, bool builtin_op, const Span& span, double reduction);
// MPICH's MPI_Bcast: a binomial tree below 12288 bytes or 8 ranks (⌈log2 S⌉·(α + B·β)), otherwise a
// scatter and an all-gather (recursive doubling on a power of two, a ring otherwise):
// (log2 p + log2 S or S - 1)·α + 2(S-1)/S·B·β. ValueError for a span without ranks, nodes or links.
KUSARI_API double mpi_bcast_seconds(int64_t n, int wire_bytes, const Span& span);

// The predicted seconds of one allreduce_grad call of the communicator `algorithm` (naive, flat, ring,
// hierarchical, two_dimensional, multi_color, hybrid) with `options` on the gradients of these sizes
// (elements, float32): the size check, the float16 policy's scan and agreement, packing, the messages
// and the unpacking, as the algorithm's code does them. ValueError for an unknown algorithm.
KUSARI_API double allreduce_seconds(const Cluster& cluster, const std::string& algorithm,
                                    const CommunicatorOptions& options, const std::vector<int64_t>& tensor_elements);

// A layer's share of a training step, in backward order: its gradient's elements and the backward time
// spent before that gradient is final.
struct KUSARI_API LayerCost {
  int64_t gradient_elements = 0;
  double backward_seconds = 0;
};

// A training step's gradient averaging as the multi-node optimizer does it: buckets filled greedily in
// backward order up to bucket_bytes of float32 (a larger gradient alone), each all-reduced on one
// communication thread, in order, as soon as its last gradient is final.
struct KUSARI_API StepPrediction {
  double backward_seconds = 0;   // the sum of the layers' backward times
  double allreduce_seconds = 0;  // every bucket's all-reduce, one after another
  double exposed_seconds = 0;    // what finishes after backward: the step's added time
  int buckets = 0;
};

// The step's averaging on `cluster` (overlap = false: every bucket after backward, as with overlap off).
KUSARI_API StepPrediction predict_step(const Cluster& cluster, const std::string& algorithm,
                                       const CommunicatorOptions& options, const std::vector<LayerCost>& layers,
                                       int64_t bucket_bytes, bool overlap = true);

// One candidate of recommend(): an algorithm, a bucket size, a wire dtype and its prediction.
struct KUSARI_API Recommendation {
  std::string algorithm;
  int64_t bucket_bytes = 0;
  Dtype wire_dtype = Dtype::float32;
  StepPrediction step;
};

// Each of `algorithms` (default: every modelled one but naive, which is flat on one bucket) with every
// bucket size and wire dtype, best first by exposed, then total all-reduce time (ties keep this order).
KUSARI_API std::vector<Recommendation> recommend(const Cluster& cluster, const std::vector<LayerCost>& layers,
                                                 const std::vector<int64_t>& bucket_sizes,
                                                 const std::vector<Dtype>& wire_dtypes,
                                                 const CommunicatorOptions& base = {},
                                                 const std::vector<std::string>& algorithms = {});

// The algorithm names allreduce_seconds knows, in the order of bench/allreduce.
KUSARI_API std::vector<std::string> modelled_algorithms();

}  // namespace kusari::distributed::cost
