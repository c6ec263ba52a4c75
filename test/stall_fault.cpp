// A job in which rank 1 stops (SIGSTOP) before its second update while rank 0 waits in that update's
// gradient all-reduce: with KUSARI_STALL_WARNING=2 and KUSARI_STALL_TIMEOUT=6 the stall inspector must
// name the bucket and rank 1 and end the job (test/expect_abort.sh checks the message, status and time).
// With KUSARI_LOOPBACK_NCCL=1 the job takes the NCCL path (nccl on loopback:0), else ring on the CPU.

#include <csignal>
#include <cstdlib>
#include <string>

#include <kusari/kusari.h>

using namespace kusari;

int main() {
  const char* stand_in = std::getenv("KUSARI_LOOPBACK_NCCL");
  const bool nccl_path = stand_in && std::string(stand_in) == "1";
  const Device device = nccl_path ? Device::loopback(0) : Device::cpu();
  const auto comm = distributed::create_communicator(nccl_path ? "nccl" : "ring");
  auto model = std::make_shared<L::Linear>(3, 2);
  model->to_device(device);
  auto optimizer = distributed::create_multi_node_optimizer(std::make_shared<optimizers::SGD>(0.1), comm);
  optimizer->setup(model);
  const Variable x(Array::ones({4, 3}, Dtype::float32, device), false);
  for (int step = 0; step < 2; ++step) {
    if (step == 1 && comm.rank() == 1) std::raise(SIGSTOP);
    optimizer->update([&] { return F::sum(model->forward(x)); });
  }
  return 0;
}
