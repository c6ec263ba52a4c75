// The pipelined ring. Messages are identified by (step, chunk): at absolute step t the rank at ring
// position p receives segment (p - t - 1) mod P from its left neighbour; steps 0 .. P-2 reduce-scatter
// (the receiver adds its own contribution), steps P-1 .. 2P-3 all-gather (the receiver stores the sum).
// A processed chunk is forwarded at once, so each chunk is loaded, summed, stored and sent while it is
// hot in cache. Messages are handled in diagonal order (step + chunk) which matches the order in which
// the left neighbour produces them.

#include <kusari/distributed/detail/ring.h>

#include <algorithm>
#include <deque>

#include <kusari/distributed/detail/mpi_util.h>
#include <kusari/distributed/detail/wire_buffer.h>

namespace kusari::distributed {
namespace {

// Chunk storage: pooled host memory (see scratch()).
using Bytes = Array;

// The element range of segment `segment` of [begin, end) cut into `parts` nearly equal parts.
ElementRange segment_range(int64_t begin, int64_t end, int parts, int segment) {
  const int64_t length = end - begin;
  return {begin + length * segment / parts, begin + length * (segment + 1) / parts};
}

// Position of `rank` in `order`.
int position_of(const std::vector<int>& order, int rank) {
  const auto it = std::find(order.begin(), order.end(), rank);
  if (it == order.end()) throw ValueError(cat("RingPlan: rank ", rank, " is missing from the ring order"));
  return static_cast<int>(it - order.begin());
}

// a mod b in [0, b) for any sign of a.
int modulo(int a, int b) { return ((a % b) + b) % b; }

// Throws ValueError unless tags [first, first + count) are valid on comm.
void require_tags(MPI_Comm comm, int first, int count) {
  int* upper_bound = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(comm, MPI_TAG_UB, &upper_bound, &found), "MPI_Comm_get_attr");
  if (found && static_cast<int64_t>(first) + count - 1 > *upper_bound) {
    throw ValueError(cat("ring all-reduce: needs message tags up to ", static_cast<int64_t>(first) + count - 1,
                         ", MPI allows ", *upper_bound, " (use fewer colors)"));
  }
}

// The state of one ring while it runs.
class RingStream {
 public:
  RingStream(const RingPlan& plan, ReduceBuffer& buffer);
  RingStream(const RingStream&) = delete;
  RingStream& operator=(const RingStream&) = delete;

  // True once every message was received and processed (sends may still be in flight).
  bool received_all() const { return next_ >= sequence_.size(); }
  // Processes the messages that have arrived, in order, without blocking; returns whether any was.
  bool poll();
  // The receive processed next (valid while !received_all()).
  MPI_Request& head_request() { return posted_.front().request; }
  // Waits for the sends still in flight.
  void finish();

 private:
  struct Message {
    int step;       // absolute ring step
    int64_t chunk;  // chunk index inside the segment
  };
  struct Transfer {
    MPI_Request request = MPI_REQUEST_NULL;
    Bytes bytes;           // pooled storage (undefined when data points into `owned`)
    void* data = nullptr;  // the wire elements
  };

  // The elements a message carries.
  ElementRange chunk_range(const Message& message) const;
  // A pooled chunk buffer.
  Bytes take_bytes();
  // Sends a chunk's wire elements at `data` to the right neighbour as `step`; `bytes` (the pooled
  // storage holding them, if any) is kept until the send completes.
  void send(const void* data, const ElementRange& range, int step, Bytes bytes);
  // Where element `element` of the owned segment lives in plan.owned.
  void* in_owned(int64_t element) const;
  // Sends the first step's chunks up to `through_chunk`.
  void issue_first_sends(int64_t through_chunk);
  // Posts receives up to `depth` messages ahead.
  void post_receives();
  // Sums, stores and forwards one received chunk.
  void process(const Message& message, Transfer transfer);
  // Returns the storage of completed sends to the pool.
  void reclaim_sends();

  const RingPlan& plan_;
  ReduceBuffer& buffer_;
  int size_;
  int position_;
  int left_;
  int right_;
  int first_step_;
  int end_step_;
  int64_t chunk_elements_;
  int64_t chunks_;
  int64_t owned_begin_;
  std::vector<Message> sequence_;
  size_t next_ = 0;           // next message of sequence_ to process
  size_t next_post_ = 0;      // next message of sequence_ to post a receive for
  int64_t first_sent_ = 0;    // chunks of the first step already sent
  std::deque<Transfer> posted_;
  std::vector<MPI_Request> send_requests_;
  std::vector<Bytes> send_bytes_;
  std::vector<int> completed_indices_;  // MPI_Testsome's output
  std::vector<Bytes> free_;
};

RingStream::RingStream(const RingPlan& plan, ReduceBuffer& buffer)
    : plan_(plan), buffer_(buffer), size_(static_cast<int>(plan.order.size())) {
  require_tags(plan.comm, plan.tag_base, 2 * size_);
  position_ = position_of(plan.order, comm_rank(plan.comm));
  left_ = plan.order[static_cast<size_t>(modulo(position_ - 1, size_))];
  right_ = plan.order[static_cast<size_t>(modulo(position_ + 1, size_))];
  first_step_ = plan.phases == RingPhases::allgather ? size_ - 1 : 0;
  end_step_ = plan.phases == RingPhases::reduce_scatter ? size_ - 1 : 2 * size_ - 2;
  chunk_elements_ = std::max<int64_t>(1, plan.chunk_bytes / static_cast<int64_t>(buffer.wire_itemsize()));
  const int64_t longest = (plan.end - plan.begin + size_ - 1) / size_;
  chunks_ = std::max<int64_t>(1, (longest + chunk_elements_ - 1) / chunk_elements_);
  owned_begin_ = segment_range(plan.begin, plan.end, size_, (position_ + 1) % size_).begin;
  const int64_t steps = end_step_ - first_step_;
  for (int64_t diagonal = 0; diagonal + 1 < steps + chunks_; ++diagonal) {
    for (int64_t s = std::max<int64_t>(0, diagonal - chunks_ + 1); s <= std::min(steps - 1, diagonal); ++s) {
      sequence_.push_back({static_cast<int>(first_step_ + s), diagonal - s});
    }
  }
}

ElementRange RingStream::chunk_range(const Message& message) const {
  const ElementRange segment = segment_range(plan_.begin, plan_.end, size_, modulo(position_ - message.step - 1, size_));
  const int64_t begin = std::min(segment.end, segment.begin + message.chunk * chunk_elements_);
  return {begin, std::min(segment.end, begin + chunk_elements_)};
}

Bytes RingStream::take_bytes() {
  if (free_.empty()) return scratch(static_cast<size_t>(chunk_elements_) * buffer_.wire_itemsize());
  Bytes bytes = std::move(free_.back());
  free_.pop_back();
  return bytes;
}

void RingStream::send(const void* data, const ElementRange& range, int step, Bytes bytes) {
  const int count = mpi_count(static_cast<int64_t>(buffer_.wire_bytes(range.end - range.begin)), "ring");
  send_bytes_.push_back(std::move(bytes));
  send_requests_.push_back(MPI_REQUEST_NULL);
  check_mpi(MPI_Isend(data, count, MPI_BYTE, right_, plan_.tag_base + step, plan_.comm, &send_requests_.back()),
            "MPI_Isend");
}

void* RingStream::in_owned(int64_t element) const {
  return advance(plan_.owned, element - owned_begin_, buffer_.wire_itemsize());
}

void RingStream::issue_first_sends(int64_t through_chunk) {
  for (; first_sent_ < std::min(chunks_, through_chunk + 1); ++first_sent_) {
    // What goes out at step t is what arrived at step t - 1.
    const ElementRange range = chunk_range({first_step_ - 1, first_sent_});
    if (plan_.phases == RingPhases::allgather) {
      // The owned sums go out straight from `owned` and are this rank's result too.
      buffer_.store(range.begin, range.end, in_owned(range.begin));
      send(in_owned(range.begin), range, first_step_, {});
    } else {
      Bytes bytes = take_bytes();
      void* data = bytes.host_data();
      buffer_.load(range.begin, range.end, data);
      send(data, range, first_step_, std::move(bytes));
    }
  }
}

void RingStream::post_receives() {
  for (; next_post_ < sequence_.size() && next_post_ < next_ + static_cast<size_t>(plan_.depth); ++next_post_) {
    const Message& message = sequence_[next_post_];
    const ElementRange range = chunk_range(message);
    Transfer transfer;
    if (plan_.phases == RingPhases::reduce_scatter && message.step == size_ - 2) {
      // The last reduce-scatter step lands directly in `owned`.
      transfer.data = in_owned(range.begin);
    } else {
      transfer.bytes = take_bytes();
      transfer.data = transfer.bytes.host_data();
    }
    const int count = mpi_count(static_cast<int64_t>(buffer_.wire_bytes(range.end - range.begin)), "ring");
    check_mpi(MPI_Irecv(transfer.data, count, MPI_BYTE, left_, plan_.tag_base + message.step, plan_.comm,
                        &transfer.request),
              "MPI_Irecv");
    posted_.push_back(std::move(transfer));
  }
}

void RingStream::process(const Message& message, Transfer transfer) {
  const ElementRange range = chunk_range(message);
  const bool reducing = message.step < size_ - 1;
  if (reducing) buffer_.accumulate(range.begin, range.end, transfer.data);
  const bool final_sum = !reducing || message.step == size_ - 2;
  if (final_sum && plan_.phases != RingPhases::reduce_scatter) buffer_.store(range.begin, range.end, transfer.data);
  if (message.step + 1 < end_step_) {
    void* data = transfer.data;
    send(data, range, message.step + 1, std::move(transfer.bytes));
  } else if (transfer.bytes.defined()) {
    free_.push_back(std::move(transfer.bytes));
  }
}

void RingStream::reclaim_sends() {
  if (send_requests_.empty()) return;
  int completed = 0;
  completed_indices_.resize(send_requests_.size());
  check_mpi(MPI_Testsome(static_cast<int>(send_requests_.size()), send_requests_.data(), &completed,
                         completed_indices_.data(), MPI_STATUSES_IGNORE),
            "MPI_Testsome");
  if (completed <= 0) return;
  size_t kept = 0;
  for (size_t i = 0; i < send_requests_.size(); ++i) {
    if (send_requests_[i] == MPI_REQUEST_NULL) {
      if (send_bytes_[i].defined()) free_.push_back(std::move(send_bytes_[i]));
    } else {
      if (kept != i) {
        send_requests_[kept] = send_requests_[i];
        send_bytes_[kept] = std::move(send_bytes_[i]);
      }
      ++kept;
    }
  }
  send_requests_.resize(kept);
  send_bytes_.resize(kept);
}

bool RingStream::poll() {
  bool progressed = false;
  while (!received_all()) {
    const Message& message = sequence_[next_];
    issue_first_sends(message.step - first_step_ + message.chunk + plan_.depth);
    post_receives();
    int done = 0;
    check_mpi(MPI_Test(&posted_.front().request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) break;
    Transfer transfer = std::move(posted_.front());
    posted_.pop_front();
    ++next_;
    process(message, std::move(transfer));
    progressed = true;
  }
  reclaim_sends();
  return progressed;
}

void RingStream::finish() {
  check_mpi(MPI_Waitall(static_cast<int>(send_requests_.size()), send_requests_.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  send_requests_.clear();
  send_bytes_.clear();
}

// A ring of one rank: the sum is this rank's own contribution.
void run_single(const RingPlan& plan, ReduceBuffer& buffer) {
  const ElementRange range{plan.begin, plan.end};
  switch (plan.phases) {
    case RingPhases::reduce_scatter: buffer.load(range.begin, range.end, plan.owned); break;
    case RingPhases::allgather: buffer.store(range.begin, range.end, plan.owned); break;
    case RingPhases::both: {
      const int64_t chunk = std::max<int64_t>(1, plan.chunk_bytes / static_cast<int64_t>(buffer.wire_itemsize()));
      const Bytes bytes = scratch(buffer.wire_bytes(std::min(chunk, range.end - range.begin)));
      for (int64_t at = range.begin; at < range.end; at += chunk) {
        const int64_t stop = std::min(range.end, at + chunk);
        buffer.load(at, stop, bytes.host_data());
        buffer.store(at, stop, bytes.host_data());
      }
      break;
    }
  }
}

}  // namespace

ElementRange owned_range(const RingPlan& plan) {
  const int size = static_cast<int>(plan.order.size());
  const int position = position_of(plan.order, comm_rank(plan.comm));
  return segment_range(plan.begin, plan.end, size, (position + 1) % size);
}

RingPlan natural_ring(MPI_Comm comm, int64_t begin, int64_t end, const CommunicatorOptions& options) {
  RingPlan plan;
  plan.comm = comm;
  plan.order = rotated_order(comm_size(comm), 0, false);
  plan.begin = begin;
  plan.end = end;
  plan.chunk_bytes = options.chunk_bytes;
  plan.depth = options.pipeline_depth;
  return plan;
}

std::vector<int> rotated_order(int size, int first, bool reverse) {
  std::vector<int> order(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) order[static_cast<size_t>(i)] = modulo(first + (reverse ? -i : i), size);
  return order;
}

std::vector<int> color_order(int size, int color, int colors) {
  return rotated_order(size, static_cast<int>(int64_t{size} * color / colors), color % 2 == 1);
}

bool colors_between_nodes(const Topology& topology) { return topology.intra_size > 1 && topology.homogeneous; }

void run_rings(const std::vector<RingPlan>& plans, ReduceBuffer& buffer) {
  std::deque<RingStream> streams;
  for (const RingPlan& plan : plans) {
    if (plan.order.size() == 1) {
      run_single(plan, buffer);
    } else {
      streams.emplace_back(plan, buffer);
    }
  }
  std::vector<MPI_Request> heads;
  std::vector<RingStream*> waiting;
  while (true) {
    bool progressed = false;
    for (RingStream& stream : streams) progressed = stream.poll() || progressed;
    if (progressed) continue;
    heads.clear();
    waiting.clear();
    for (RingStream& stream : streams) {
      if (stream.received_all()) continue;
      heads.push_back(stream.head_request());
      waiting.push_back(&stream);
    }
    if (waiting.empty()) break;
    int index = MPI_UNDEFINED;
    check_mpi(MPI_Waitany(static_cast<int>(heads.size()), heads.data(), &index, MPI_STATUS_IGNORE), "MPI_Waitany");
    if (index != MPI_UNDEFINED) waiting[static_cast<size_t>(index)]->head_request() = MPI_REQUEST_NULL;
  }
  for (RingStream& stream : streams) stream.finish();
}

void reduce_within_nodes(ReduceBuffer& buffer, const CommGroups& groups, const CommunicatorOptions& options,
                         const std::function<void(ReduceBuffer& slice)>& across) {
  RingPlan node_ring = natural_ring(groups.intra(), 0, buffer.size(), options);
  if (groups.topology().inter_size == 1) return run_rings({node_ring}, buffer);
  const ElementRange slice = owned_range(node_ring);
  const Array slice_sum = scratch(buffer.wire_bytes(slice.end - slice.begin));
  node_ring.owned = slice_sum.host_data();
  node_ring.phases = RingPhases::reduce_scatter;
  run_rings({node_ring}, buffer);
  WireBuffer wire_slice(slice_sum.host_data(), slice.end - slice.begin, buffer.wire_dtype());
  across(wire_slice);
  node_ring.phases = RingPhases::allgather;
  run_rings({node_ring}, buffer);
}

}  // namespace kusari::distributed
