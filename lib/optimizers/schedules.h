#pragma once
// Learning-rate schedules: small objects mapping a step (an iteration or an epoch, fractional
// allowed; the caller chooses which it passes) to a value, e.g.
// `optimizer.set_lr(schedule.value(iteration))` every iteration.

#include <memory>
#include <vector>

#include <kusari/core/api.h>

namespace kusari::optimizers {

// A value as a function of the step; value() throws ValueError for a negative step.
class KUSARI_API Schedule {
 public:
  virtual ~Schedule() = default;
  // The value at `step` ≥ 0.
  virtual double value(double step) const = 0;
};

// base · gamma^⌊step / step_size⌋.
class KUSARI_API StepSchedule : public Schedule {
 public:
  // step_size > 0, gamma > 0.
  StepSchedule(double base, double gamma, double step_size);
  double value(double step) const override;

 private:
  double base_, gamma_, step_size_;
};

// base · gamma^(number of milestones ≤ step) (Goyal et al.: ÷10 at epochs 30, 60, 80).
class KUSARI_API MultiStepSchedule : public Schedule {
 public:
  // gamma > 0, milestones strictly increasing.
  MultiStepSchedule(double base, double gamma, std::vector<double> milestones);
  double value(double step) const override;

 private:
  double base_, gamma_;
  std::vector<double> milestones_;
};

// base · gamma^step.
class KUSARI_API ExponentialSchedule : public Schedule {
 public:
  // gamma > 0.
  ExponentialSchedule(double base, double gamma);
  double value(double step) const override;

 private:
  double base_, gamma_;
};

// From start to end linearly over `total` steps, then end.
class KUSARI_API LinearSchedule : public Schedule {
 public:
  // total > 0.
  LinearSchedule(double start, double end, double total);
  double value(double step) const override;

 private:
  double start_, end_, total_;
};

// (base − end) · (1 − min(step, total) / total)^power + end (Jia et al., MLPerf LARS: power 2).
class KUSARI_API PolynomialSchedule : public Schedule {
 public:
  // total > 0, power > 0.
  PolynomialSchedule(double base, double end, double total, double power);
  double value(double step) const override;

 private:
  double base_, end_, total_, power_;
};

// end + (base − end) · (1 + cos(π · min(step, total) / total)) / 2.
class KUSARI_API CosineSchedule : public Schedule {
 public:
  // total > 0.
  CosineSchedule(double base, double end, double total);
  double value(double step) const override;

 private:
  double base_, end_, total_;
};

// values[i] on [boundaries[i−1], boundaries[i]) (values[0] before the first boundary, the last
// value from the last boundary on).
class KUSARI_API PiecewiseConstantSchedule : public Schedule {
 public:
  // boundaries strictly increasing, values.size() == boundaries.size() + 1.
  PiecewiseConstantSchedule(std::vector<double> boundaries, std::vector<double> values);
  double value(double step) const override;

 private:
  std::vector<double> boundaries_, values_;
};

// A linear ramp from `start` to the wrapped schedule's value over `warmup` steps, then the wrapped
// schedule (Goyal et al.'s gradual warm-up). The wrapped schedule sees step − warmup when `shift`
// (its step 0 is the end of the warm-up), else the step unchanged.
class KUSARI_API LinearWarmup : public Schedule {
 public:
  // after non-null, warmup ≥ 0.
  LinearWarmup(std::shared_ptr<const Schedule> after, double warmup, double start = 0, bool shift = false);
  double value(double step) const override;

 private:
  std::shared_ptr<const Schedule> after_;
  double warmup_, start_;
  bool shift_;
};

// The slow-start schedule of Akiba et al. 2017 over epochs: factors[i]·lr_base on [epochs[i−1],
// epochs[i]); by default 0.5·lr_base on [0, 40), 0.075·lr_base on [40, 70), 0.01·lr_base on [70, 85),
// 0.001·lr_base from 85 on. Throws ValueError unless epochs increase strictly and there is one more
// factor than epochs.
KUSARI_API PiecewiseConstantSchedule slow_start_schedule(double lr_base, const std::vector<double>& epochs = {40, 70, 85},
                                                         const std::vector<double>& factors = {0.5, 0.075, 0.01, 0.001});

}  // namespace kusari::optimizers
