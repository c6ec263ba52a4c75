#include "step_sgd_recipe.h"

#include <algorithm>


#include <kusari/optimizers/hooks.h>
#include <kusari/optimizers/momentum_sgd.h>
#include <kusari/optimizers/schedules.h>
#include <kusari/optimizers/weight_decay_exclusion.h>
#include <kusari/training/schedule_shift.h>

#include "flags.h"

namespace kusari::recipes {

namespace O = kusari::optimizers;

Settings goyal_settings(Preset preset) {
  Settings s = preset_settings(preset);
  if (preset == Preset::imagenet) s.batchsize = 8192;
  s.zero_gamma = true;
  return s;
}

StepSgdRecipe::StepSgdRecipe(std::string name, std::string description, const StepSgdDefaults& paper)
    : Recipe(std::move(name), std::move(description)),
      values_(paper), warmup_(paper.warmup_epochs, false), milestones_(paper.milestones, true) {}

void StepSgdRecipe::add_flags(CLI::App& app) {
  lr_option_ = app.add_option("--lr", lr_, "peak learning rate (default: --lr-base x B / 256)")
                   ->check(nonnegative_number());
  app.add_option("--lr-base", values_.lr_base, "learning rate per 256 examples (linear scaling rule)")
      ->check(nonnegative_number())->capture_default_str();
  app.add_option("--momentum", values_.momentum, "momentum")->check(unit_interval())->capture_default_str();
  app.add_option("--weight-decay", values_.weight_decay, "L2 weight decay")->check(nonnegative_number())
      ->capture_default_str();
  add_switch(app, "decay-bias-bn", values_.decay_bias_and_bn,
             "weight decay on biases and batch-normalization parameters too");
  warmup_.add_to(app, "--warmup-epochs", "epochs of gradual warm-up from --warmup-start-lr to lr");
  warmup_start_option_ = app.add_option("--warmup-start-lr", warmup_start_lr_,
                                        "learning rate at the start of the warm-up (default: --lr-base)")
                             ->check(nonnegative_number());
  milestones_.add_to(app, "--lr-milestones", "epochs at which lr is multiplied by --lr-decay");
  app.add_option("--lr-decay", values_.lr_decay, "factor at each milestone")->check(positive_number())
      ->capture_default_str();
  add_switch(app, "momentum-correction", values_.momentum_correction,
             "rescale the momentum buffer by lr_new / lr_old when lr changes");
}

void StepSgdRecipe::resolve(const Settings& settings) {
  if (lr_option_->count() == 0) {
    lr_ = values_.lr_base * static_cast<double>(settings.batchsize) / 256.0;
    lr_option_->default_str(std::to_string(lr_));
  }
  if (settings.preset == Preset::fashion_mnist && !values_.fashion_mnist_milestones.empty()) {
    warmup_.set_paper(values_.fashion_mnist_warmup_epochs, 15);
    milestones_.set_paper(values_.fashion_mnist_milestones, 15);
  }
  warmup_.resolve(settings.epoch);
  milestones_.resolve(settings.epoch);
  require_increasing(milestones_.values(), "--lr-milestones");
  if (warmup_start_option_->count() == 0) {
    warmup_start_lr_ = values_.lr_base;  // lr_0: the per-256 rate the linear scaling starts from
    warmup_start_option_->default_str(std::to_string(warmup_start_lr_));
  }
}

std::shared_ptr<O::Optimizer> StepSgdRecipe::make_optimizer(const std::shared_ptr<links::Link>& model) {
  auto optimizer = std::make_shared<O::MomentumSGD>(lr_, values_.momentum);
  optimizer->set_momentum_correction(values_.momentum_correction);
  optimizer->setup(model);
  if (values_.weight_decay > 0) optimizer->add_hook(O::WeightDecay(values_.weight_decay), "weight_decay");
  if (!values_.decay_bias_and_bn) O::exclude_from_weight_decay(*optimizer);
  return optimizer;
}

void StepSgdRecipe::extend(training::Trainer& trainer) {
  auto steps = std::make_shared<O::MultiStepSchedule>(lr_, values_.lr_decay, milestones_.values());
  std::shared_ptr<const O::Schedule> schedule = steps;
  if (warmup_.value() > 0) {
    schedule = std::make_shared<O::LinearWarmup>(steps, warmup_.value(), std::min(warmup_start_lr_, lr_));
  }
  trainer.extend(std::make_shared<training::ScheduleShift>("lr", schedule, "epoch"));
}

}  // namespace kusari::recipes
