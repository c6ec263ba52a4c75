// jia2018: "Highly Scalable Deep Learning Training System with Mixed-Precision: Training ImageNet in
// Four Minutes" (Jia et al. 2018) — float16 forward and backward with float32 master weights and
// dynamic loss scaling (the loss itself in float32), LARS without weight decay or LARS scaling on
// biases and BN γ/β, linear warm-up then polynomial decay of power 2, tensor fusion and the hybrid
// all-reduce (hierarchical for small buckets, ring for large ones). Models: ResNet-50, AlexNet-BN,
// AlexNet with BN after pool5. Reported: B = 64k; ResNet-50 75.8% in 6.6 min on 2048 P40, AlexNet
// 58.7% in 4 min on 1024 P40 (95 epochs).

#include <kusari/optimizers/lars.h>
#include <kusari/optimizers/schedules.h>
#include <kusari/optimizers/weight_decay_exclusion.h>
#include <kusari/training/schedule_shift.h>

#include "common/epoch_scaled.h"
#include "common/flags.h"
#include "common/recipe.h"
#include "papers.h"

namespace kusari::recipes {

namespace O = kusari::optimizers;

// MLPerf's LARS rates for ResNet-50 by global batch: base 10 below 16k, 25 below 32k, 31.2 above
// (with 25 warm-up epochs instead of 5).
double reference_lars_lr(int64_t batch) { return batch < 16384 ? 10.0 : batch < 32768 ? 25.0 : 31.2; }

// LARS under warm-up and polynomial decay, in float16 with dynamic loss scaling by default.
class Jia2018 : public Recipe {
 public:
  Jia2018()
      : Recipe("jia2018", "Jia et al. 2018: mixed precision, LARS, polynomial decay, hybrid all-reduce") {}
  Settings defaults(Preset preset, const std::string& model) const override {
    Settings s = preset_settings(preset);
    if (preset == Preset::imagenet) {
      s.batchsize = 65536;
      s.dtype = "float16";
      s.loss_scale = "dynamic";
      if (model.rfind("alexnet", 0) == 0) s.epoch = 95;  // prescanned: the last --model given
    }
    s.wire_dtype = "float16";
    s.communicator = "hybrid";
    return s;
  }
  void add_flags(CLI::App& app) override {
    lr_option_ = app.add_option("--lr", lr_, "base rate of LARS (default by B: 10 below 16k, 25 below 32k, 31.2)")
                     ->check(nonnegative_number());
    app.add_option("--lr-end", lr_end_, "learning rate at the end of the polynomial decay")
        ->check(nonnegative_number())->capture_default_str();
    app.add_option("--lr-power", power_, "power of the polynomial decay")->check(positive_number())
        ->capture_default_str();
    warmup_.add_to(app, "--warmup-epochs", "epochs of linear warm-up from 0 (25 of 90 from B = 32k up)");
    app.add_option("--momentum", options_.momentum, "momentum")->check(unit_interval())->capture_default_str();
    eta_option_ = app.add_option("--lars-eta", options_.eta, "trust coefficient (default 0.001; 0.02 with --lars-clip)")
                      ->check(nonnegative_number());
    app.add_option("--lars-eps", options_.eps, "epsilon of the trust ratio")->check(nonnegative_number())
        ->capture_default_str();
    add_switch(app, "lars-clip", options_.clip, "LARC: rate min(lr, trust) instead of lr x trust");
    app.add_option("--weight-decay", options_.weight_decay_rate, "weight decay (not on biases nor BN gamma/beta)")
        ->check(nonnegative_number())->capture_default_str();
  }
  void resolve(const Settings& settings) override {
    if (lr_option_->count() == 0) {
      lr_ = reference_lars_lr(settings.batchsize);
      lr_option_->default_str(std::to_string(lr_));
    }
    // MLPerf's warm-up: 5 epochs of 90 below B = 32k, 25 from there; AlexNet's 95 epochs scale it.
    warmup_.set_paper({settings.batchsize >= 32768 ? 25.0 : 5.0}, settings.model.rfind("alexnet", 0) == 0 ? 95 : 90);
    warmup_.resolve(settings.epoch);
    if (eta_option_->count() == 0) options_.eta = options_.clip ? 0.02 : 0.001;
    if (warmup_.value() >= settings.epoch) {
      throw FlagError{"--warmup-epochs: expected fewer than --epoch " + std::to_string(settings.epoch) + ", got " +
                      std::to_string(warmup_.value())};
    }
    epochs_ = settings.epoch;
  }
  std::shared_ptr<O::Optimizer> make_optimizer(const std::shared_ptr<links::Link>& model) override {
    O::LARSOptions options = options_;
    options.lr = lr_;
    auto optimizer = std::make_shared<O::LARS>(options);
    optimizer->setup(model);
    O::exclude_from_weight_decay(*optimizer);
    return optimizer;
  }
  void extend(training::Trainer& trainer) override {
    auto decay = std::make_shared<O::PolynomialSchedule>(lr_, lr_end_, epochs_ - warmup_.value(), power_);
    trainer.extend(std::make_shared<training::ScheduleShift>(
        "lr", std::make_shared<O::LinearWarmup>(decay, warmup_.value(), 0.0, true), "epoch"));
  }

 private:
  double lr_ = 0, lr_end_ = 1e-4, power_ = 2, epochs_ = 0;
  CLI::Option* lr_option_ = nullptr;
  CLI::Option* eta_option_ = nullptr;
  EpochScaled warmup_{{5}, false};  // the paper's value is set in resolve(), from the batch
  O::LARSOptions options_{.weight_decay_rate = 5e-5};
};

std::unique_ptr<Recipe> make_jia2018(int, char**) { return std::make_unique<Jia2018>(); }

}  // namespace kusari::recipes
