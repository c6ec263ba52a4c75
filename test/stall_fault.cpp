// A job in which rank 1 stops (SIGSTOP) before its second update while rank 0 waits in that update's
// gradient all-reduce: with KUSARI_STALL_WARNING=2 and KUSARI_STALL_TIMEOUT=6 the stall inspector must
// name the bucket and rank 1 and end the job (test/expect_abort.sh checks the message, status and time).

#include <csignal>

#include <kusari/kusari.h>

using namespace kusari;

int main() {
  const auto comm = distributed::create_communicator("ring");
  auto model = std::make_shared<L::Linear>(3, 2);
  auto optimizer = distributed::create_multi_node_optimizer(std::make_shared<optimizers::SGD>(0.1), comm);
  optimizer->setup(model);
  const Variable x(Array::ones({4, 3}), false);
  for (int step = 0; step < 2; ++step) {
    if (step == 1 && comm.rank() == 1) std::raise(SIGSTOP);
    optimizer->update([&] { return F::sum(model->forward(x)); });
  }
  return 0;
}
