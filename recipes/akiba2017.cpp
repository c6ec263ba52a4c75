// akiba2017: "Extremely Large Minibatch SGD: Training ResNet-50 on ImageNet in 15 Minutes" (Akiba,
// Suzuki, Fukuda 2017) — the RMSprop warm-up (one update sliding from RMSprop to momentum SGD around
// epoch b_c), the slow-start learning rate (0.5, 0.075, 0.01, 0.001 × 0.1·B/256 from epochs 0, 40,
// 70, 85), batch normalization without moving averages (batch statistics in training; before each
// evaluation the run loop averages the last training batch's E[x] and E[x²] over the ranks, see
// training::average_batch_statistics), gradients all-reduced in float16.
// Reported: 1024 P100, B = 32768, 90 epochs in 15 minutes, 74.9% top-1.

#include <kusari/optimizers/rmsprop_warmup.h>
#include <kusari/optimizers/schedules.h>
#include <kusari/training/schedule_shift.h>

#include "common/epoch_scaled.h"
#include "common/flags.h"
#include "common/recipe.h"
#include "papers.h"

namespace kusari::recipes {

namespace O = kusari::optimizers;

// The RMSprop warm-up under the slow-start schedule; the rest is the run loop's.
class Akiba2017 : public Recipe {
 public:
  Akiba2017()
      : Recipe("akiba2017", "Akiba et al. 2017: RMSprop warm-up, slow-start lr, BN without moving averages") {}
  Settings defaults(Preset preset, const std::string&) const override {
    Settings s = preset_settings(preset);
    if (preset == Preset::imagenet) s.batchsize = 32768;
    s.bn_running_average = false;
    s.wire_dtype = "float16";
    s.communicator = "ring";
    return s;
  }
  void add_flags(CLI::App& app) override {
    app.add_option("--lr-base", lr_base_, "learning rate per 256 examples (lr_base of the slow start = this x B / 256)")
        ->check(nonnegative_number())->capture_default_str();
    boundaries_.add_to(app, "--slow-start-epochs", "epochs where the slow-start factor changes");
    app.add_option("--slow-start-factors", factors_, "slow-start factors of lr_base, one more than the epochs")
        ->delimiter(',')->check(nonnegative_number())->capture_default_str();
    app.add_option("--momentum", options_.momentum, "mu1, momentum of the SGD phase")->check(unit_interval())
        ->capture_default_str();
    app.add_option("--rms-decay", options_.rms_decay, "mu2, decay of the squared-gradient average")
        ->check(unit_interval())->capture_default_str();
    app.add_option("--rms-eps", options_.eps, "epsilon of the RMSprop denominator")->check(positive_number())
        ->capture_default_str();
    app.add_option("--lr-rms", options_.lr_rms, "learning rate of the RMSprop phase")->check(nonnegative_number())
        ->capture_default_str();
    center_.add_to(app, "--warmup-center", "b_c, the epoch where alpha_SGD reaches 0.5");
    period_.add_to(app, "--warmup-period", "b_p, the length of the RMSprop-to-SGD transition");
    app.add_option("--weight-decay", options_.weight_decay_rate, "L2 weight decay")->check(nonnegative_number())
        ->capture_default_str();
  }
  void resolve(const Settings& settings) override {
    for (EpochScaled* value : {&boundaries_, &center_, &period_}) value->resolve(settings.epoch);
    if (factors_.size() != boundaries_.values().size() + 1) {
      throw FlagError{"--slow-start-factors: expected " + std::to_string(boundaries_.values().size() + 1) +
                      " factors (one more than --slow-start-epochs), got " + std::to_string(factors_.size())};
    }
    require_increasing(boundaries_.values(), "--slow-start-epochs");
    if (!(period_.value() > 0)) throw FlagError{"--warmup-period: expected a number > 0, got 0"};
    lr_ = lr_base_ * static_cast<double>(settings.batchsize) / 256.0;
  }
  std::shared_ptr<O::Optimizer> make_optimizer(const std::shared_ptr<links::Link>& model) override {
    O::RMSpropWarmupOptions options = options_;
    options.lr = lr_ * factors_.front();
    options.center = center_.value();
    options.period = period_.value();
    auto optimizer = std::make_shared<O::RMSpropWarmup>(options);
    optimizer->setup(model);
    return optimizer;
  }
  void extend(training::Trainer& trainer) override {
    trainer.extend(std::make_shared<training::ScheduleShift>(
        "lr",
        std::make_shared<O::PiecewiseConstantSchedule>(O::slow_start_schedule(lr_, boundaries_.values(), factors_)),
        "epoch"));
  }

 private:
  double lr_base_ = 0.1;
  double lr_ = 0;
  EpochScaled boundaries_{{40, 70, 85}, true};
  std::vector<double> factors_{0.5, 0.075, 0.01, 0.001};
  EpochScaled center_{{10}, false}, period_{{5}, false};
  O::RMSpropWarmupOptions options_{.weight_decay_rate = 1e-4};
};

std::unique_ptr<Recipe> make_akiba2017(int, char**) { return std::make_unique<Akiba2017>(); }

}  // namespace kusari::recipes
