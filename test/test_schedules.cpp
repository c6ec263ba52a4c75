#include <cmath>
#include <numbers>

#include "testing.h"

using namespace kusari;
using namespace kusari::testing;
namespace O = kusari::optimizers;

TEST_CASE("StepSchedule and ExponentialSchedule") {
  const O::StepSchedule step(0.1, 0.5, 10);
  CHECK(step.value(0) == 0.1);
  CHECK(step.value(9.99) == 0.1);
  CHECK(step.value(10) == 0.05);
  CHECK(step.value(25) == doctest::Approx(0.025));
  const O::ExponentialSchedule exponential(2, 0.9);
  CHECK(exponential.value(0) == 2);
  CHECK(exponential.value(3) == doctest::Approx(2 * 0.729));
  CHECK(exponential.value(0.5) == doctest::Approx(2 * std::sqrt(0.9)));
}

TEST_CASE("MultiStepSchedule: Goyal et al.'s divisions at epochs 30, 60, 80") {
  const O::MultiStepSchedule schedule(3.2, 0.1, {30, 60, 80});
  CHECK(schedule.value(0) == 3.2);
  CHECK(schedule.value(29.9) == 3.2);
  CHECK(schedule.value(30) == doctest::Approx(0.32));
  CHECK(schedule.value(65) == doctest::Approx(0.032));
  CHECK(schedule.value(89) == doctest::Approx(0.0032));
}

TEST_CASE("LinearSchedule, PolynomialSchedule and CosineSchedule") {
  const O::LinearSchedule linear(1, 0, 100);
  CHECK(linear.value(0) == 1);
  CHECK(linear.value(25) == 0.75);
  CHECK(linear.value(100) == 0);
  CHECK(linear.value(500) == 0);
  const O::PolynomialSchedule poly(10, 1e-4, 100, 2);
  CHECK(poly.value(0) == doctest::Approx(10));
  CHECK(poly.value(50) == doctest::Approx((10 - 1e-4) * 0.25 + 1e-4));
  CHECK(poly.value(100) == doctest::Approx(1e-4));
  CHECK(poly.value(150) == doctest::Approx(1e-4));
  const O::CosineSchedule cosine(1, 0.1, 40);
  CHECK(cosine.value(0) == doctest::Approx(1));
  CHECK(cosine.value(20) == doctest::Approx(0.55));
  CHECK(cosine.value(10) == doctest::Approx(0.1 + 0.9 * (1 + std::cos(std::numbers::pi / 4)) / 2));
  CHECK(cosine.value(40) == doctest::Approx(0.1));
  CHECK(cosine.value(41) == doctest::Approx(0.1));
}

TEST_CASE("LinearWarmup: Goyal et al.'s gradual warm-up from 0.1 to k * 0.1 over 5 epochs") {
  const double k = 32;
  auto after = std::make_shared<O::MultiStepSchedule>(0.1 * k, 0.1, std::vector<double>{30, 60, 80});
  const O::LinearWarmup warmup(after, 5, 0.1);
  CHECK(warmup.value(0) == doctest::Approx(0.1));
  CHECK(warmup.value(2.5) == doctest::Approx(0.1 + (3.2 - 0.1) / 2));
  CHECK(warmup.value(5) == doctest::Approx(3.2));
  CHECK(warmup.value(31) == doctest::Approx(0.32));
}

TEST_CASE("LinearWarmup with shift: the MLPerf LARS schedule (warm-up, then polynomial decay from its end)") {
  auto decay = std::make_shared<O::PolynomialSchedule>(10, 1e-4, 100, 2);
  const O::LinearWarmup schedule(decay, 20, 0, true);
  CHECK(schedule.value(0) == 0);
  CHECK(schedule.value(5) == doctest::Approx(2.5));
  CHECK(schedule.value(20) == doctest::Approx(10));
  CHECK(schedule.value(70) == doctest::Approx((10 - 1e-4) * 0.25 + 1e-4));
  const O::LinearWarmup no_warmup(decay, 0);
  CHECK(no_warmup.value(0) == doctest::Approx(10));
}

TEST_CASE("slow_start_schedule: Akiba et al.'s piecewise rates") {
  const double lr_base = 0.1 * 32768 / 256;
  const O::PiecewiseConstantSchedule schedule = O::slow_start_schedule(lr_base);
  CHECK(schedule.value(0) == doctest::Approx(0.5 * lr_base));
  CHECK(schedule.value(39.99) == doctest::Approx(0.5 * lr_base));
  CHECK(schedule.value(40) == doctest::Approx(0.075 * lr_base));
  CHECK(schedule.value(70) == doctest::Approx(0.01 * lr_base));
  CHECK(schedule.value(84.5) == doctest::Approx(0.01 * lr_base));
  CHECK(schedule.value(85) == doctest::Approx(0.001 * lr_base));
  CHECK(schedule.value(90) == doctest::Approx(0.001 * lr_base));
  // Scaled to 15 epochs, with other factors; bad boundaries are refused by the piecewise schedule.
  const O::PiecewiseConstantSchedule short_run = O::slow_start_schedule(2.0, {5, 10}, {1, 0.5, 0.25});
  CHECK(short_run.value(4.9) == doctest::Approx(2.0));
  CHECK(short_run.value(5) == doctest::Approx(1.0));
  CHECK(short_run.value(12) == doctest::Approx(0.5));
  expect_error<ValueError>([] { O::slow_start_schedule(1, {10, 5}, {1, 1, 1}); }, {"PiecewiseConstantSchedule"});
  expect_error<ValueError>([] { O::slow_start_schedule(1, {5}, {1}); }, {"2 values", "1 boundaries"});
}

TEST_CASE("a schedule drives an optimizer's lr per iteration") {
  O::MomentumSGD opt(0.0, 0.9);
  const O::LinearWarmup schedule(std::make_shared<O::CosineSchedule>(0.4, 0, 100), 10);
  for (int iteration = 0; iteration < 20; ++iteration) opt.set_lr(schedule.value(iteration));
  CHECK(opt.lr() == doctest::Approx(0.2 * (1 + std::cos(std::numbers::pi * 19 / 100))));
}

TEST_CASE("schedules reject bad arguments and negative steps") {
  expect_error<ValueError>([] { O::StepSchedule(1, 0.5, 0); }, {"StepSchedule", "step_size > 0", "0"});
  expect_error<ValueError>([] { O::StepSchedule(1, -0.5, 1); }, {"gamma > 0", "-0.5"});
  expect_error<ValueError>([] { O::MultiStepSchedule(1, 0.1, {30, 20}); }, {"strictly increasing", "20 after 30"});
  expect_error<ValueError>([] { O::ExponentialSchedule(1, 0); }, {"ExponentialSchedule", "gamma > 0"});
  expect_error<ValueError>([] { O::LinearSchedule(1, 0, 0); }, {"LinearSchedule", "total > 0"});
  expect_error<ValueError>([] { O::PolynomialSchedule(1, 0, 10, 0); }, {"power > 0"});
  expect_error<ValueError>([] { O::CosineSchedule(1, 0, -1); }, {"CosineSchedule", "total > 0", "-1"});
  expect_error<ValueError>([] { O::PiecewiseConstantSchedule({1, 2}, {1, 2}); }, {"expected 3 values", "got 2"});
  expect_error<ValueError>([] { O::LinearWarmup(nullptr, 5); }, {"LinearWarmup", "null"});
  expect_error<ValueError>([] { O::LinearWarmup(std::make_shared<O::LinearSchedule>(1, 0, 1), -1); },
                           {"warmup >= 0"});
  expect_error<ValueError>([] { O::StepSchedule(1, 0.5, 10).value(-1); }, {"StepSchedule", "step >= 0", "-1"});
}
