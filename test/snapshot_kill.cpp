// Training that snapshots after every iteration, for test/snapshot_kill_check.py, which stops it with
// SIGKILL at chosen places and starts it again. One process, one thread, a fixed seed: every run
// computes the same values. It prints "resumed ITERATION SUM" after autoload (0 without a snapshot) and
// "iteration ITERATION SUM" after each update, SUM being the sum of every parameter in float64 (%.17g),
// so the checker can compare each resumption with an unbroken run.
//   snapshot_kill OUT_DIR ITERATIONS [KILL_ITERATION PLACE]
// kills itself at iteration KILL_ITERATION, at PLACE:
//   update    after the update, before its snapshot is written
//   write     inside the snapshot's write: files may not grow past 4 KiB from then on, and the write
//             that crosses it raises SIGXFSZ, whose handler raises SIGKILL (a partial temporary file
//             stays behind, as after a crash)
//   snapshot  after the snapshot is in place

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/resource.h>

#include <kusari/kernels/routines.h>
#include <kusari/kusari.h>

using namespace kusari;

namespace {

// The sum of every parameter of `model`, in float64.
double parameter_sum(const links::Link& model) {
  double sum = 0;
  for (const Variable& p : model.params()) sum += ops::sum(p.data().astype(Dtype::float64)).item<double>();
  return sum;
}

// Prints "resumed ITERATION SUM" once the snapshot is restored and "iteration ITERATION SUM" after each
// update.
class SumPrinter : public training::Extension {
 public:
  explicit SumPrinter(std::shared_ptr<links::Link> model) : model_(std::move(model)) {}
  void initialize(training::Trainer& trainer) override { print("resumed", trainer); }
  void operator()(training::Trainer& trainer) override { print("iteration", trainer); }
  std::string default_name() const override { return "SumPrinter"; }

 private:
  void print(const char* what, training::Trainer& trainer) const {
    std::printf("%s %lld %.17g\n", what, static_cast<long long>(trainer.updater().iteration()),
                parameter_sum(*model_));
    std::fflush(stdout);
  }
  std::shared_ptr<links::Link> model_;
};

// Kills the process at one iteration, at the place its priority puts it among the extensions (see the
// top of the file).
class Killer : public training::Extension {
 public:
  Killer(int64_t iteration, std::string place) : iteration_(iteration), place_(std::move(place)) {}
  int priority() const override {
    return place_ == "snapshot" ? training::kPrioritySnapshot - 100 : training::kPrioritySnapshot + 100;
  }
  void operator()(training::Trainer& trainer) override {
    if (trainer.updater().iteration() != iteration_) return;
    if (place_ != "write") std::raise(SIGKILL);
    std::signal(SIGXFSZ, [](int) { std::raise(SIGKILL); });
    const rlimit limit{4096, RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  std::string default_name() const override { return "Killer"; }

 private:
  int64_t iteration_;
  std::string place_;
};

}  // namespace

int main(int argc, char** argv) {
  const bool kills = argc == 5;
  if (argc != 3 && !(kills && (!std::strcmp(argv[4], "update") || !std::strcmp(argv[4], "write") ||
                               !std::strcmp(argv[4], "snapshot")))) {
    std::fprintf(stderr, "usage: %s OUT_DIR ITERATIONS [KILL_ITERATION update|write|snapshot]\n", argv[0]);
    return 2;
  }
  set_num_threads(1);
  default_generator().set_state(5, 0);
  const int64_t n = 512;
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = static_cast<int32_t>(i * 7 % 10);
  auto data = std::make_shared<data::TupleDataset>(
      std::vector<Array>{Array::uniform({n, 784}, 0, 1, 9), Array::from_vector(labels, {n})});
  auto mlp = std::make_shared<L::models::MLP>(1500, 10);
  {
    const auto no_graph = no_backprop_mode();
    mlp->forward(Variable(Array::zeros({1, 784}), false));  // gives the lazily shaped first layer its shape
  }
  auto model = std::make_shared<L::Classifier>(mlp);
  auto optimizer = std::make_shared<optimizers::MomentumSGD>(0.01);
  optimizer->setup(model);
  auto updater = std::make_shared<training::StandardUpdater>(
      std::make_shared<data::SerialIterator>(data, 64, true, true, 3), optimizer, training::supervised_loss(model));
  training::Trainer trainer(updater, {std::atof(argv[2]), "iteration"}, argv[1]);
  trainer.extend(training::snapshot({.n_retains = 2, .autoload = true}), {1, "iteration"});
  trainer.extend(std::make_shared<SumPrinter>(model));
  if (kills) trainer.extend(std::make_shared<Killer>(std::atoll(argv[3]), argv[4]));
  trainer.run();
  return 0;
}
