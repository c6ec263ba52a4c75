// Four data-parallel training steps of a 3-layer MLP whose layers each fill a gradient bucket, for
// test/timeline_check.py, which runs it under mpiexec -n 2 with KUSARI_TIMELINE set and reads the traces.
// After each step it prints "rank R step S overlap STARTED/BUCKETS" from distributed::last_overlap.
// The schedule is forced: backward's last step (below the first layer) sleeps 300 ms, leaving the
// communication thread the CPU to start the buckets backward has filled by then, so that every step
// after the first overlaps however loaded the machine is.

#include <chrono>
#include <cstdio>
#include <thread>

#include <kusari/kusari.h>

using namespace kusari;

namespace {

// Passes x through; its backward, the last of the step (the anchor makes it run), sleeps first.
class PauseAtEndOfBackward final : public FunctionNode {
 public:
  std::string label() const override { return "PauseAtEndOfBackward"; }
  std::vector<Array> forward(const std::vector<Array>& inputs) override { return {inputs[0].copy()}; }
  // Gradients of the inputs asked for: only the anchor's (x needs none), zero.
  std::vector<Variable> backward(const std::vector<size_t>& targets, const std::vector<Variable>&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return std::vector<Variable>(targets.size(), Variable(Array::zeros({1})));
  }
};

}  // namespace

int main() {
  const auto comm = distributed::create_communicator("ring");
  default_generator().set_state(11, 0);
  auto model = std::make_shared<L::Classifier>(std::make_shared<L::models::MLP>(1024, 10));
  auto optimizer = distributed::create_multi_node_optimizer(std::make_shared<optimizers::MomentumSGD>(0.01), comm,
                                                            {.bucket_bytes = 1 << 20});
  optimizer->setup(model);
  auto data = std::make_shared<data::TupleDataset>(std::vector<Array>{
      Array::uniform({256, 1024}, 0, 1, 3 + static_cast<uint64_t>(comm.rank())),
      Array::from_vector(std::vector<int32_t>(256, 3), {256})});
  // Not a parameter: it only makes backward reach the pause.
  const Variable anchor(Array::zeros({1}), true);
  training::StandardUpdater updater(std::make_shared<data::SerialIterator>(data, 64), optimizer,
                                    [&](const std::vector<Array>& batch) {
                                      const Variable x = std::make_shared<PauseAtEndOfBackward>()->apply(
                                          {Variable(batch[0], false), anchor})[0];
                                      return (*model)(x, Variable(batch[1], false));
                                    });
  for (int step = 0; step < 4; ++step) {
    updater.update();
    const distributed::OverlapReport report = distributed::last_overlap(*optimizer);
    std::printf("rank %d step %d overlap %d/%d\n", comm.rank(), step, report.started_in_backward, report.buckets);
  }
  return 0;
}
