#include <kusari/distributed/multi_node_optimizer.h>

#include <kusari/distributed/multi_node_synchronizer.h>

namespace kusari::distributed {

std::shared_ptr<optimizers::Optimizer> create_multi_node_optimizer(std::shared_ptr<optimizers::Optimizer> actual,
                                                                   const Communicator& comm,
                                                                   const MultiNodeOptions& options) {
  if (!actual) throw ValueError("create_multi_node_optimizer: expected an optimizer, got null");
  if (options.bucket_bytes < 1) {
    throw ValueError(cat("create_multi_node_optimizer: expected bucket_bytes >= 1, got ", options.bucket_bytes));
  }
  std::weak_ptr<optimizers::Optimizer> weak = actual;
  auto synchronizer = std::make_shared<MultiNodeSynchronizer>(comm.split(0, comm.rank()), options, [weak] {
    const std::shared_ptr<optimizers::Optimizer> optimizer = weak.lock();
    return optimizer && optimizer->loss_scaler() && optimizer->loss_scaler()->is_dynamic();
  });
  actual->set_finite_check([synchronizer](bool locally_finite) {
    return synchronizer->agreed_finite() && locally_finite;
  });
  actual->set_gradient_synchronizer(synchronizer);
  return actual;
}

}  // namespace kusari::distributed
