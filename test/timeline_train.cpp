// Four data-parallel training steps of a 3-layer MLP whose layers each fill a gradient bucket, for
// test/timeline_check.py, which runs it under mpiexec -n 2 with KUSARI_TIMELINE set and reads the traces.
// After each step it prints "rank R step S overlap STARTED/BUCKETS" from distributed::last_overlap.

#include <cstdio>

#include <kusari/kusari.h>

using namespace kusari;

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
  training::StandardUpdater updater(std::make_shared<data::SerialIterator>(data, 64), optimizer,
                                    training::supervised_loss(model));
  for (int step = 0; step < 4; ++step) {
    updater.update();
    const distributed::OverlapReport report = distributed::last_overlap(*optimizer);
    std::printf("rank %d step %d overlap %d/%d\n", comm.rank(), step, report.started_in_backward, report.buckets);
  }
  return 0;
}
