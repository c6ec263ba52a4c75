// Trains an MLP or a CIFAR-style ResNet-20 on Fashion-MNIST (Debian's dataset-fashion-mnist) with a
// progress bar, per-epoch evaluation, a JSON log, SVG plots and snapshots, as Chainer's MNIST example.

#include <kusari/kusari.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

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
  int threads = 0;  // 0: all cores
};

const char* kUsage =
    "usage: fashion_mnist [--model mlp|resnet20] [--batchsize N] [--epoch N] [--lr X] [--unit N]\n"
    "                     [--out DIR] [--resume SNAPSHOT] [--dataset DIR] [--seed N] [--threads N]\n";

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
  for (const auto& [key, value] : values) {
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
    else throw ValueError(cat("fashion_mnist: unknown flag --", key, "\n", kUsage));
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

}  // namespace

int main(int argc, char** argv) try {
  const Flags flags = parse(argc, argv);
  if (flags.threads > 0) set_num_threads(flags.threads);
  manual_seed(flags.seed);

  std::shared_ptr<L::Link> predictor;
  if (flags.model == "mlp") {
    predictor = std::make_shared<L::models::MLP>(flags.unit, 10);
  } else {
    predictor = std::make_shared<L::models::ResNet>(20, 1, 10);
  }
  auto model = std::make_shared<L::Classifier>(predictor);
  auto optimizer = std::make_shared<O::MomentumSGD>(flags.lr, 0.9);
  optimizer->setup(model);
  optimizer->add_hook(O::WeightDecay(flags.model == "mlp" ? 0.0 : 5e-4), "weight_decay");
  O::exclude_from_weight_decay(*optimizer);

  auto train = D::fashion_mnist(true, flags.dataset);
  auto test = D::fashion_mnist(false, flags.dataset);
  auto train_iter = std::make_shared<D::SerialIterator>(train, flags.batchsize, true, true, flags.seed);
  auto test_iter = std::make_shared<D::SerialIterator>(test, 1000, false, false);

  // The loss of a batch {x, t}, reporting loss and accuracy under main/.
  T::LossFunction loss = [model](const std::vector<Array>& batch) {
    const Variable y = model->predictor()->forward(Variable(batch.at(0), false));
    const Variable t(batch.at(1), false);
    const Variable value = F::softmax_cross_entropy(y, t);
    T::report({{"main/loss", value}, {"main/accuracy", F::accuracy(y, t)}});
    return value;
  };
  auto updater = std::make_shared<T::StandardUpdater>(train_iter, optimizer, loss);
  T::Trainer trainer(updater, {flags.epoch, "epoch"}, flags.out);
  // Step decay: the rate drops tenfold for the last third of training.
  trainer.extend(std::make_shared<T::ScheduleShift>(
      "lr", std::make_shared<O::MultiStepSchedule>(flags.lr, 0.1, std::vector<double>{flags.epoch * 2.0 / 3.0}),
      "epoch"));
  trainer.extend(std::make_shared<T::Evaluator>(test_iter, loss, model));
  trainer.extend(std::make_shared<T::LogReport>());
  trainer.extend(T::snapshot({.n_retains = 2}), T::Trigger{1, "epoch"});
  trainer.extend(std::make_shared<T::PlotReport>(std::vector<std::string>{"main/loss", "validation/main/loss"},
                                                 T::PlotReportOptions{.filename = "loss.svg"}));
  trainer.extend(std::make_shared<T::PlotReport>(
      std::vector<std::string>{"main/accuracy", "validation/main/accuracy"},
      T::PlotReportOptions{.filename = "accuracy.svg"}));
  trainer.extend(std::make_shared<T::PrintReport>(std::vector<std::string>{
      "epoch", "main/loss", "validation/main/loss", "main/accuracy", "validation/main/accuracy", "elapsed_time"}));
  trainer.extend(std::make_shared<T::ProgressBar>());
  if (!flags.resume.empty()) serializers::load_npz(flags.resume, trainer);
  trainer.run();
  return 0;
} catch (const std::exception& e) {
  std::cerr << "fashion_mnist: " << e.what() << "\n";
  return 1;
}
