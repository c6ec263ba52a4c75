#include <kusari/optimizers/schedules.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include <kusari/core/error.h>

namespace kusari::optimizers {

namespace {
void require(bool ok, const char* schedule, const char* expectation, double got) {
  if (!ok) throw ValueError(cat(schedule, ": expected ", expectation, ", got ", got));
}

void require_step(double step, const char* schedule) { require(step >= 0, schedule, "a step >= 0", step); }

void require_increasing(const std::vector<double>& points, const char* schedule) {
  for (size_t i = 1; i < points.size(); ++i) {
    if (!(points[i] > points[i - 1])) {
      throw ValueError(cat(schedule, ": expected strictly increasing points, got ", points[i], " after ", points[i - 1]));
    }
  }
}

// How many of the sorted points are ≤ step.
double count_passed(const std::vector<double>& points, double step) {
  return static_cast<double>(std::upper_bound(points.begin(), points.end(), step) - points.begin());
}

// min(step, total) / total.
double progress(double step, double total) { return std::min(step, total) / total; }
}  // namespace

StepSchedule::StepSchedule(double base, double gamma, double step_size)
    : base_(base), gamma_(gamma), step_size_(step_size) {
  require(step_size > 0, "StepSchedule", "step_size > 0", step_size);
  require(gamma > 0, "StepSchedule", "gamma > 0", gamma);
}

double StepSchedule::value(double step) const {
  require_step(step, "StepSchedule");
  return base_ * std::pow(gamma_, std::floor(step / step_size_));
}

MultiStepSchedule::MultiStepSchedule(double base, double gamma, std::vector<double> milestones)
    : base_(base), gamma_(gamma), milestones_(std::move(milestones)) {
  require(gamma > 0, "MultiStepSchedule", "gamma > 0", gamma);
  require_increasing(milestones_, "MultiStepSchedule");
}

double MultiStepSchedule::value(double step) const {
  require_step(step, "MultiStepSchedule");
  return base_ * std::pow(gamma_, count_passed(milestones_, step));
}

ExponentialSchedule::ExponentialSchedule(double base, double gamma) : base_(base), gamma_(gamma) {
  require(gamma > 0, "ExponentialSchedule", "gamma > 0", gamma);
}

double ExponentialSchedule::value(double step) const {
  require_step(step, "ExponentialSchedule");
  return base_ * std::pow(gamma_, step);
}

LinearSchedule::LinearSchedule(double start, double end, double total) : start_(start), end_(end), total_(total) {
  require(total > 0, "LinearSchedule", "total > 0", total);
}

double LinearSchedule::value(double step) const {
  require_step(step, "LinearSchedule");
  return start_ + (end_ - start_) * progress(step, total_);
}

PolynomialSchedule::PolynomialSchedule(double base, double end, double total, double power)
    : base_(base), end_(end), total_(total), power_(power) {
  require(total > 0, "PolynomialSchedule", "total > 0", total);
  require(power > 0, "PolynomialSchedule", "power > 0", power);
}

double PolynomialSchedule::value(double step) const {
  require_step(step, "PolynomialSchedule");
  return (base_ - end_) * std::pow(1 - progress(step, total_), power_) + end_;
}

CosineSchedule::CosineSchedule(double base, double end, double total) : base_(base), end_(end), total_(total) {
  require(total > 0, "CosineSchedule", "total > 0", total);
}

double CosineSchedule::value(double step) const {
  require_step(step, "CosineSchedule");
  return end_ + (base_ - end_) * (1 + std::cos(std::numbers::pi * progress(step, total_))) / 2;
}

PiecewiseConstantSchedule::PiecewiseConstantSchedule(std::vector<double> boundaries, std::vector<double> values)
    : boundaries_(std::move(boundaries)), values_(std::move(values)) {
  if (values_.size() != boundaries_.size() + 1) {
    throw ValueError(cat("PiecewiseConstantSchedule: expected ", boundaries_.size() + 1, " values for ",
                         boundaries_.size(), " boundaries, got ", values_.size()));
  }
  require_increasing(boundaries_, "PiecewiseConstantSchedule");
}

double PiecewiseConstantSchedule::value(double step) const {
  require_step(step, "PiecewiseConstantSchedule");
  return values_[static_cast<size_t>(count_passed(boundaries_, step))];
}

LinearWarmup::LinearWarmup(std::shared_ptr<const Schedule> after, double warmup, double start, bool shift)
    : after_(std::move(after)), warmup_(warmup), start_(start), shift_(shift) {
  if (!after_) throw ValueError("LinearWarmup: expected a schedule to wrap, got null");
  require(warmup >= 0, "LinearWarmup", "warmup >= 0", warmup);
}

double LinearWarmup::value(double step) const {
  require_step(step, "LinearWarmup");
  if (step >= warmup_) return after_->value(shift_ ? step - warmup_ : step);
  const double target = after_->value(shift_ ? 0 : warmup_);
  return start_ + (target - start_) * step / warmup_;
}

PiecewiseConstantSchedule slow_start_schedule(double lr_base, const std::vector<double>& epochs,
                                              const std::vector<double>& factors) {
  std::vector<double> rates;
  for (double factor : factors) rates.push_back(factor * lr_base);
  return PiecewiseConstantSchedule(epochs, rates);
}

}  // namespace kusari::optimizers
