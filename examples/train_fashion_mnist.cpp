// The program to copy first: a model of one's own trained on Fashion-MNIST with the Trainer, an
// Evaluator, a log, printed columns, a progress bar and snapshots; run it again and it resumes.
#include <CLI/CLI.hpp>
#include <kusari/kusari.h>

using namespace kusari;
namespace T = kusari::training;

// A model of one's own: 784 pixels, a hidden layer with ReLU, 10 logits.
class SmallNet : public L::Cloneable<SmallNet, L::Chain> {
 public:
  explicit SmallNet(int64_t units) {
    add_link("hidden", std::make_shared<L::Linear>(L::LinearOptions(0, units)));
    add_link("out", std::make_shared<L::Linear>(L::LinearOptions(units, 10)));
  }
  Variable forward(const Variable& x) override {
    return child<L::Linear>("out")->forward(F::relu(child<L::Linear>("hidden")->forward(x)));
  }

 protected:
  std::string type_name() const override { return "SmallNet"; }
};

int main(int argc, char** argv) {
  CLI::App app{"Trains a small custom model on Fashion-MNIST; run again with more epochs to resume"};
  double epochs = 3;
  int64_t units = 100;
  std::string out = "result", dataset = data::kFashionMnistDir;
  app.add_option("-e,--epoch", epochs, "epochs in all (a rerun resumes from the newest snapshot)");
  app.add_option("-u,--unit", units, "hidden units");
  app.add_option("-o,--out", out, "where the log and snapshots go");
  app.add_option("--dataset", dataset, "directory of the IDX files");
  CLI11_PARSE(app, argc, argv);

  auto model = std::make_shared<L::Classifier>(std::make_shared<SmallNet>(units));  // reports loss, accuracy
  auto optimizer = std::make_shared<optimizers::MomentumSGD>(0.05);
  optimizer->setup(model);
  auto train = std::make_shared<data::SerialIterator>(data::fashion_mnist(true, dataset), 100);
  auto test = std::make_shared<data::SerialIterator>(data::fashion_mnist(false, dataset), 1000, false, false);

  T::Trainer trainer(std::make_shared<T::StandardUpdater>(train, optimizer, model), {epochs, "epoch"}, out);
  trainer.extend(std::make_shared<T::Evaluator>(test, model));  // validation/main/loss and accuracy
  trainer.extend(T::observe_lr());
  trainer.extend(std::make_shared<T::LogReport>());  // out/log, one JSON entry per epoch
  trainer.extend(std::make_shared<T::PrintReport>(std::vector<std::string>{
      "epoch", "main/loss", "validation/main/loss", "main/accuracy", "validation/main/accuracy", "elapsed_time"}));
  trainer.extend(std::make_shared<T::ProgressBar>());
  trainer.extend(T::snapshot({.n_retains = 1, .autoload = true}));  // every epoch; loaded first on a rerun
  trainer.run();
  return 0;
}
