// A job in which rank 1 is killed (SIGKILL: no handler, no message of its own) in the middle of
// data-parallel training while rank 0 goes on into the next gradient all-reduce: the launcher must end
// the whole job, naming the signal (test/expect_abort.sh checks the status, the time and the message).

#include <csignal>

#include <kusari/kusari.h>

using namespace kusari;

int main() {
  const auto comm = distributed::create_communicator("ring");
  auto model = std::make_shared<L::models::MLP>(64, 10);
  auto optimizer = distributed::create_multi_node_optimizer(std::make_shared<optimizers::MomentumSGD>(0.01), comm);
  optimizer->setup(model);
  const Variable x(Array::uniform({32, 20}, 0, 1, 5), false);
  const Variable t(Array::from_vector(std::vector<int32_t>(32, 3), {32}), false);
  for (int step = 0; step < 1000000; ++step) {
    if (step == 20 && comm.rank() == 1) std::raise(SIGKILL);
    optimizer->update([&] { return F::softmax_cross_entropy(model->forward(x), t); });
  }
  return 0;
}
