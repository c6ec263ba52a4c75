#pragma once
// MultiNodeSynchronizer: the GradientSynchronizer behind create_multi_node_optimizer. Internal header.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <kusari/distributed/detail/communication_thread.h>
#include <kusari/distributed/communicator.h>
#include <kusari/distributed/detail/gradient_buckets.h>
#include <kusari/distributed/multi_node_optimizer.h>
#include <kusari/kernels/cuda/detail/stream_order.h>
#include <kusari/optimizers/gradient_synchronizer.h>

namespace kusari::distributed {

// Averages an optimizer's gradients over the ranks (see create_multi_node_optimizer). Every MPI call
// it makes runs on its communication thread, over a communicator no one else uses. A GPU's buckets are
// packed and all-reduced on the device's communication stream, each after a mark of the compute stream
// made when its last gradient became final, so they overlap the rest of backward on the device too;
// the compute stream waits for them only when update() installs the averages.
class MultiNodeSynchronizer final : public optimizers::GradientSynchronizer {
 public:
  using Clock = std::chrono::steady_clock;  // the clock of the overlap report
  // comm must be this object's own. Every rank installs the same averages, so a loss scaler's check of
  // them on one rank answers for all (a NaN or an infinity anywhere reaches every rank's sums).
  MultiNodeSynchronizer(Communicator comm, const MultiNodeOptions& options);
  // Removes the gradient hooks and completes the communication already queued.
  ~MultiNodeSynchronizer() override;

  // Hooks every parameter of target (forgetting any earlier target and its bucket layout).
  void attach(const std::shared_ptr<links::Link>& target) override;
  // The first call checks and broadcasts the parameters and skips the step unless every rank already
  // held rank 0's values (and double buffering is off); the calls that do not skip leave the averaged
  // gradients in the parameters and return the loss scale they were computed with (see
  // create_multi_node_optimizer).
  std::optional<double> synchronize(double loss_scale) override;
  // Opens (+1) or closes (-1) a NoSync scope; while any is open, backward passes only accumulate
  // gradients locally and update() throws.
  void defer(int change) { deferring_ += change; }
  // How the all-reduces of the step last installed met backward.
  const OverlapReport& last_overlap() const { return last_overlap_; }

 private:
  // One step's gradients on their way through the buckets.
  struct Transfer {
    std::vector<Array> sources;             // per slot: the gradient to send (undefined: zeros)
    std::vector<int64_t> missing;           // per bucket: gradients still to come from backward
    std::vector<Array> buffers;             // per bucket: the averaged values, once sent
    size_t next = 0;                        // the next bucket to send (buckets go out in order)
    bool repeated = false;                  // a gradient became final twice (several backward passes)
    CommunicationThread::Ticket ticket = 0; // the step's last task
    double loss_scale = 1;                  // the one the gradients were computed with
    // Per bucket: when its task (packing, then all-reduce) began and ended.
    std::shared_ptr<std::vector<std::pair<Clock::time_point, Clock::time_point>>> tasks;
    // Per bucket: on a GPU, where its averaged values are final in the communication stream's queue.
    std::shared_ptr<std::vector<kernels::cuda::StreamMark>> averaged;
    Clock::time_point backward_end;                               // when update() took over
  };

  // Gradient hook: records the order before the first update, then fills and sends buckets.
  void on_gradient(const std::string& name, const Variable& param);
  // Hooks `param` unless it already is.
  void hook(const std::string& name, const Variable& param);
  // Waits for the communication thread and forgets the target, its hooks and buckets.
  void detach();
  // Agreement check, broadcast of rank 0's parameters and gradient order, bucket layout; returns
  // whether every rank's parameters already were bitwise rank 0's (agreed across ranks).
  bool first_update();
  // Throws ValueError if the trainable parameters are no longer those the buckets were laid out for.
  void require_unchanged_parameters() const;
  // An empty transfer for the current bucket layout.
  Transfer new_transfer() const;
  // Bucket b's float32 buffer for this step: the cached one when nothing refers to it any more (the
  // gradients installed from it were cleared), else a new one that replaces it in the cache.
  Array bucket_buffer(size_t b);
  // Sends every bucket from t.next on whose gradients have all arrived.
  void send_ready(Transfer& t);
  // Queues the packing and all-reduce of bucket b.
  void send_bucket(Transfer& t, size_t b);
  // Takes the gradients backward has not delivered from the parameters and sends every remaining
  // bucket.
  void send_rest(Transfer& t);
  // Waits for t, puts its averaged gradients into the parameters and returns their loss scale.
  double install(const Transfer& t);

  Communicator comm_;
  MultiNodeOptions options_;
  std::shared_ptr<links::Link> target_;
  std::vector<std::pair<Variable, int64_t>> hooks_;  // (parameter, hook id)
  std::unordered_set<std::string> hooked_;
  std::vector<std::string> arrival_order_;           // before the first update: first arrivals in order
  std::unordered_set<std::string> arrived_;
  std::unique_ptr<GradientBuckets> buckets_;         // null until the first update
  std::optional<Transfer> current_;                  // this step's, started by backward (overlap)
  std::optional<Transfer> previous_;                 // double buffering: the last step's, in flight
  OverlapReport last_overlap_;
  Clock::time_point update_start_;                   // when the current synchronize() began
  int deferring_ = 0;                                // open NoSync scopes: gradients stay local
  std::vector<Array> buffer_cache_[2];               // per bucket; two sets alternate under double buffering
  int64_t steps_ = 0;                                // transfers made, choosing the set
  CommunicationThread thread_;                       // last, so it stops before the rest goes
};

}  // namespace kusari::distributed
