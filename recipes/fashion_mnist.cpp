// Trains an MLP or a CIFAR-style ResNet-20 on Fashion-MNIST (Debian's dataset-fashion-mnist) with a
// progress bar, per-epoch evaluation, a JSON log, SVG plots and snapshots, as Chainer's MNIST example,
// data-parallel over the ranks of `mpiexec -n P` (P = 1, or no mpiexec at all, trains in one process),
// as ChainerMN's MNIST example: each rank trains on its shard with batches of --batchsize, gradients
// are averaged over the ranks, and rank 0 alone prints and writes the log, plots and snapshots.

#include <kusari/kusari.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <thread>

using namespace kusari;
namespace T = kusari::training;
namespace D = kusari::data;
namespace O = kusari::optimizers;

namespace {

struct Flags {
  std::string model = "mlp";
  int64_t batchsize = 0;  // 0: the model's default
  int64_t epoch = 0;      // 0: the model's default
  double lr = 0;          // 0: the model's default
  int64_t unit = 1000;
  std::string out = "result";
  std::string resume;
  std::string dataset = "/usr/share/datasets/fashion-mnist";
  uint64_t seed = 0;
  int threads = 0;           // 0: this node's cores shared out among its ranks
  std::string communicator;  // empty: the library's default all-reduce algorithm
};

const char* kUsage =
    "usage: [mpiexec -n P] fashion_mnist [--model mlp|resnet20] [--batchsize N] [--epoch N] [--lr X]\n"
    "           [--unit N] [--out DIR] [--resume SNAPSHOT] [--dataset DIR] [--seed N] [--threads N]\n"
    "           [--communicator naive|flat|ring|hierarchical|two_dimensional|multi_color|hybrid]\n"
    "  --batchsize N      examples per rank per iteration (the global batch is N x P; default 100 for\n"
    "                     mlp, 128 for resnet20)\n"
    "  --epoch N          passes over the training set (default 10 for mlp, 15 for resnet20)\n"
    "  --lr X             momentum SGD's learning rate, dropped tenfold for the last third (default\n"
    "                     0.05 for mlp, 0.1 for resnet20)\n"
    "  --unit N           hidden units of the MLP (default 1000)\n"
    "  --out DIR          where rank 0 writes log, loss.svg, accuracy.svg, snapshot_iter_N (default result)\n"
    "  --resume SNAPSHOT  continue from a snapshot written by a run with the same P\n"
    "  --dataset DIR      {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (default\n"
    "                     /usr/share/datasets/fashion-mnist)\n"
    "  --seed N           initial parameters, data split and shuffling (default 0)\n"
    "  --threads N        threads per rank (default: the node's cores divided among its ranks)\n"
    "  --communicator A   the all-reduce algorithm that averages gradients (default hybrid)\n";

Flags parse(int argc, char** argv) {
  Flags flags;
  std::map<std::string, std::string> values;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "--help" || key == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (key.rfind("--", 0) != 0 || i + 1 >= argc) throw ValueError(cat("fashion_mnist: unexpected argument '", key, "'\n", kUsage));
    values[key.substr(2)] = argv[++i];
  }
  for (const auto& [key, value] : values) try {
    if (key == "model") flags.model = value;
    else if (key == "batchsize") flags.batchsize = std::stoll(value);
    else if (key == "epoch") flags.epoch = std::stoll(value);
    else if (key == "lr") flags.lr = std::stod(value);
    else if (key == "unit") flags.unit = std::stoll(value);
    else if (key == "out") flags.out = value;
    else if (key == "resume") flags.resume = value;
    else if (key == "dataset") flags.dataset = value;
    else if (key == "seed") flags.seed = std::stoull(value);
    else if (key == "threads") flags.threads = std::stoi(value);
    else if (key == "communicator") flags.communicator = value;
    else throw ValueError(cat("fashion_mnist: unknown flag --", key, "\n", kUsage));
  } catch (const std::logic_error&) {  // std::sto* found no number, or one out of range
    throw ValueError(cat("fashion_mnist: --", key, " expects a number, got '", value, "'"));
  }
  if (flags.model != "mlp" && flags.model != "resnet20") {
    throw ValueError(cat("fashion_mnist: --model must be mlp or resnet20, got '", flags.model, "'"));
  }
  const bool mlp = flags.model == "mlp";
  if (flags.batchsize == 0) flags.batchsize = mlp ? 100 : 128;
  if (flags.epoch == 0) flags.epoch = mlp ? 10 : 15;
  if (flags.lr == 0) flags.lr = mlp ? 0.05 : 0.1;
  return flags;
}

// Threads per rank: the flag, or this node's cores shared out among the ranks on it.
int threads_per_rank(const Flags& flags, const distributed::Communicator& comm) {
  if (flags.threads > 0) return flags.threads;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / comm.intra_size());
}

// Trains on this rank's shards; every rank runs it.
void train(const Flags& flags) {
  const distributed::Communicator comm =
      flags.communicator.empty() ? distributed::create_communicator() : distributed::create_communicator(flags.communicator);
  const bool leader = comm.rank() == 0;
  set_num_threads(threads_per_rank(flags, comm));
  // The same seed everywhere gives every rank the same initial parameters, so the multi-node
  // optimizer's first update already takes a step.
  manual_seed(flags.seed);

  std::shared_ptr<L::Link> predictor;
  if (flags.model == "mlp") {
    predictor = std::make_shared<L::models::MLP>(flags.unit, 10);
  } else {
    predictor = std::make_shared<L::models::ResNet>(20, 1, 10);
  }
  // Batch normalization over the global batch (models without it are left as they are).
  auto model = distributed::create_mnbn_model(std::make_shared<L::Classifier>(predictor), comm);
  auto optimizer = distributed::create_multi_node_optimizer(std::make_shared<O::MomentumSGD>(flags.lr, 0.9), comm);
  optimizer->setup(model);
  optimizer->add_hook(O::WeightDecay(flags.model == "mlp" ? 0.0 : 5e-4), "weight_decay");
  O::exclude_from_weight_decay(*optimizer);

  // Training shards of equal length (every rank runs the same iterations per epoch); test shards
  // disjoint, so the evaluator counts every test example exactly once.
  auto train = distributed::scatter_dataset(D::fashion_mnist(true, flags.dataset), comm, true, flags.seed);
  auto test = distributed::scatter_dataset(D::fashion_mnist(false, flags.dataset), comm, false, {}, false);
  auto train_iter = std::make_shared<D::SerialIterator>(train, flags.batchsize, true, true, flags.seed);
  auto test_iter = std::make_shared<D::SerialIterator>(test, 1000, false, false);
  if (leader) {
    std::cout << "ranks: " << comm.size() << ", communicator: " << comm.algorithm() << ", threads per rank: "
              << get_num_threads() << "\nbatch: " << flags.batchsize << " per rank, " << flags.batchsize * comm.size()
              << " in all; training examples per rank: " << train->size() << "\n";
  }

  // The loss of a batch {x, t}, reporting loss and accuracy under main/ (rank 0's are logged).
  T::LossFunction loss = [model](const std::vector<Array>& batch) {
    const Variable y = model->predictor()->forward(Variable(batch.at(0), false));
    const Variable t(batch.at(1), false);
    const Variable value = F::softmax_cross_entropy(y, t);
    T::report({{"main/loss", value}, {"main/accuracy", F::accuracy(y, t)}});
    return value;
  };
  auto updater = std::make_shared<T::StandardUpdater>(train_iter, optimizer, loss);
  if (leader) std::filesystem::create_directories(flags.out);
  comm.barrier();  // the output directory exists before any rank's trainer looks for it
  T::Trainer trainer(updater, {static_cast<double>(flags.epoch), "epoch"}, flags.out);
  // Step decay: the rate drops tenfold for the last third of training.
  trainer.extend(std::make_shared<T::ScheduleShift>(
      "lr", std::make_shared<O::MultiStepSchedule>(flags.lr, 0.1, std::vector<double>{flags.epoch * 2.0 / 3.0}),
      "epoch"));
  trainer.extend(T::create_multi_node_evaluator(std::make_shared<T::Evaluator>(test_iter, loss, model), comm));
  auto snapshot = T::multi_node_snapshot(comm, {.n_retains = 2});
  trainer.extend(snapshot, T::Trigger{1, "epoch"});
  if (leader) {
    trainer.extend(std::make_shared<T::LogReport>());
    trainer.extend(std::make_shared<T::PlotReport>(std::vector<std::string>{"main/loss", "validation/main/loss"},
                                                   T::PlotReportOptions{.filename = "loss.svg"}));
    trainer.extend(std::make_shared<T::PlotReport>(
        std::vector<std::string>{"main/accuracy", "validation/main/accuracy"},
        T::PlotReportOptions{.filename = "accuracy.svg"}));
    trainer.extend(std::make_shared<T::PrintReport>(std::vector<std::string>{
        "epoch", "main/loss", "validation/main/loss", "main/accuracy", "validation/main/accuracy", "elapsed_time"}));
    trainer.extend(std::make_shared<T::ProgressBar>());
  }
  if (!flags.resume.empty()) snapshot->load(trainer, flags.resume);
  trainer.run();
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  try {
    flags = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  // An error on one rank ends the whole job (with status 1) instead of leaving the others waiting.
  distributed::abort_on_exception([&] { train(flags); });
  return 0;
}
