#include <kusari/distributed/multi_node_optimizer.h>

#include <kusari/distributed/mpi_interop.h>
#include <kusari/distributed/detail/multi_node_synchronizer.h>

namespace kusari::distributed {

std::shared_ptr<optimizers::Optimizer> create_multi_node_optimizer(std::shared_ptr<optimizers::Optimizer> actual,
                                                                   const Communicator& comm,
                                                                   const MultiNodeOptions& options) {
  if (!actual) throw ValueError("create_multi_node_optimizer: expected an optimizer, got null");
  if (options.bucket_bytes < 1) {
    throw ValueError(cat("create_multi_node_optimizer: expected bucket_bytes >= 1, got ", options.bucket_bytes));
  }
  // The optimizer's own communicator. Its buffer sizes are not compared before every all-reduce: the
  // first update compares the parameters across ranks, and the buckets follow from them.
  CommunicatorOptions unchecked = comm.options();
  unchecked.check_sizes = false;
  Communicator own = create_communicator(comm.algorithm(), unchecked, mpi_comm(comm));
  actual->set_gradient_synchronizer(std::make_shared<MultiNodeSynchronizer>(std::move(own), options));
  return actual;
}

namespace {

// The synchronizer create_multi_node_optimizer gave `optimizer`; throws ValueError naming `op` otherwise.
MultiNodeSynchronizer& multi_node_synchronizer(const optimizers::Optimizer& optimizer, const char* op) {
  auto* multi_node = dynamic_cast<MultiNodeSynchronizer*>(optimizer.gradient_synchronizer().get());
  if (!multi_node) throw ValueError(cat(op, ": expected an optimizer made by create_multi_node_optimizer"));
  return *multi_node;
}

}  // namespace

OverlapReport last_overlap(const optimizers::Optimizer& optimizer) {
  return multi_node_synchronizer(optimizer, "last_overlap").last_overlap();
}

NoSync::NoSync(optimizers::Optimizer& optimizer) : synchronizer_(optimizer.gradient_synchronizer()) {
  multi_node_synchronizer(optimizer, "NoSync").defer(+1);
}

NoSync::~NoSync() { static_cast<MultiNodeSynchronizer*>(synchronizer_.get())->defer(-1); }

}  // namespace kusari::distributed
