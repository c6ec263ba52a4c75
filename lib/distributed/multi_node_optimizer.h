#pragma once
// create_multi_node_optimizer: data-parallel training with any optimizer (ChainerMN's
// create_multi_node_optimizer): gradients averaged over the ranks, fused into buckets that are
// all-reduced while backward still runs.

#include <cstdint>
#include <memory>

#include <kusari/core/api.h>
#include <kusari/distributed/communicator.h>
#include <kusari/optimizers/gradient_synchronizer.h>
#include <kusari/optimizers/optimizer.h>

namespace kusari::distributed {

// Settings of create_multi_node_optimizer.
struct KUSARI_API MultiNodeOptions {
  int64_t bucket_bytes = int64_t{25} << 20;  // gradients fused per all-reduce, in float32 bytes
  bool double_buffering = false;             // apply the previous step's averaged gradients while this step's travel
  bool overlap = true;                       // start each bucket's all-reduce in backward, once its last gradient is final
};

// Makes `actual` data-parallel over comm and returns it (the same object, so its learning rate,
// hooks, loss scaling, serialization and every other setting stay where they were; a training loop
// takes it like any optimizer). From then on (collective: every rank calls it, and every rank runs
// the same steps):
//  - the first update() compares the parameters' names, shapes and dtypes across ranks (throwing
//    ValueError naming the first mismatch) and broadcasts rank 0's parameters. When that changed a
//    rank's values, it takes no step (the gradients came from each rank's own initial parameters);
//    when every rank already held the same values (the same seed, a loaded snapshot, one rank), it
//    steps like any later update, so a resumed run continues exactly where the saved one stopped;
//  - every later update() averages the gradients over the ranks before the optimizer's hooks and
//    rules run: buckets of bucket_bytes in the order backward produced gradients in the first step,
//    each all-reduced on a communication thread as soon as its last gradient is final (overlap),
//    zeros standing in for gradients a rank did not produce; update() waits for the rest. Every
//    backward through the model's parameters must happen on all ranks alike;
//  - with double_buffering, update() applies the previous step's averaged gradients (so each step's
//    gradients are applied one update late, and the second update takes no step either) while this
//    step's are all-reduced during the next step's computation (the first update never steps then);
//  - with dynamic loss scaling, every rank finds the same averaged gradients finite or not (a NaN or an
//    infinity on any rank reaches every rank's sums), and each step's gradients are unscaled by the loss
//    scale they were computed with (under double buffering
//    the one before a scale change, for the step applied after it).
// Throws ValueError for bad options.
KUSARI_API std::shared_ptr<optimizers::Optimizer> create_multi_node_optimizer(std::shared_ptr<optimizers::Optimizer> actual,
                                                                              const Communicator& comm,
                                                                              const MultiNodeOptions& options = {});

// How one step's gradient all-reduces met backward.
struct KUSARI_API OverlapReport {
  int buckets = 0;             // buckets all-reduced
  int started_in_backward = 0; // of which began on the communication thread before update() took over (0
                               // without MPI_THREAD_MULTIPLE, and under double buffering, where every
                               // bucket starts after backward and travels during the next step)
  double exposed_seconds = 0; // the communication backward did not hide: update()'s wait for the
                               // communication thread, or without one the time of every all-reduce
                               // (host time: a GPU's all-reduces are queued on its communication
                               // stream, and the device's own wait for them is not in it)
};
// The report of the last step whose averaged gradients `optimizer` installed (all zero before one,
// and after setup() onto another model); throws ValueError unless create_multi_node_optimizer made
// `optimizer`.
KUSARI_API OverlapReport last_overlap(const optimizers::Optimizer& optimizer);

// Gradient accumulation (PyTorch DDP's no_sync): while a NoSync lives, backward passes through the
// multi-node optimizer's target only accumulate their gradients locally; the first backward after it
// adds its own and all-reduces the sums as usual, so k backward passes cost one all-reduce:
//   { NoSync local(*optimizer); loss_of(batch_1).backward(); }  loss_of(batch_2).backward();  optimizer->update();
// update() inside the scope throws ValueError.
class KUSARI_API NoSync {
 public:
  // Throws ValueError unless create_multi_node_optimizer made `optimizer`.
  explicit NoSync(optimizers::Optimizer& optimizer);
  ~NoSync();
  NoSync(const NoSync&) = delete;
  NoSync& operator=(const NoSync&) = delete;

 private:
  std::shared_ptr<optimizers::GradientSynchronizer> synchronizer_;
};

}  // namespace kusari::distributed
