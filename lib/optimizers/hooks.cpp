#include <kusari/optimizers/hooks.h>

#include <cmath>

#include <kusari/kernels/optimizer_routines.h>
#include <kusari/kernels/routines.h>
#include <kusari/optimizers/lars.h>
#include <kusari/optimizers/numerics.h>

namespace kusari::optimizers {

namespace {
// Adds rate·f(w) to the gradient of every parameter not exempt from weight decay.
template <class Penalty>
void add_penalty(std::vector<GradientEntry>& entries, double rate, Penalty penalty) {
  if (rate == 0) return;
  for (GradientEntry& e : entries) {
    if (e.rule->weight_decay_exempt()) continue;
    ops::add_to(e.grad, penalty(e.param.data().astype(e.grad.dtype())) * rate);
  }
}
}  // namespace

WeightDecay::WeightDecay(double rate) : rate_(require_nonnegative(rate, "WeightDecay", "rate")) {
  if (!std::isfinite(rate)) throw ValueError(cat("WeightDecay: expected a finite rate, got ", rate));
}

void WeightDecay::operator()(Optimizer&, std::vector<GradientEntry>& entries) const {
  // g += rate·w for every parameter at once (one multi-tensor launch a device and pair of dtypes), as
  // add_penalty computes it parameter by parameter.
  if (rate_ == 0) return;
  std::vector<Array> weights, grads;
  for (const GradientEntry& e : entries) {
    if (e.rule->weight_decay_exempt()) continue;
    weights.push_back(e.param.data());
    grads.push_back(e.grad);
  }
  ops::add_scaled_tensors(weights, grads, rate_);
}

Lasso::Lasso(double rate) : rate_(require_nonnegative(rate, "Lasso", "rate")) {}

void Lasso::operator()(Optimizer&, std::vector<GradientEntry>& entries) const {
  add_penalty(entries, rate_, [](const Array& w) { return ops::sign(w); });
}

GradientClipping::GradientClipping(double threshold) : threshold_(threshold) {
  if (!(threshold > 0)) throw ValueError(cat("GradientClipping: expected threshold > 0, got ", threshold));
}

void GradientClipping::operator()(Optimizer&, std::vector<GradientEntry>& entries) const {
  if (entries.empty()) return;
  Array total = Array::scalar(0.0, Dtype::float32, entries.front().grad.device());
  for (const GradientEntry& e : entries) total = ops::add(total, sum_of_squares(e.grad).astype(Dtype::float32));
  // threshold / 0 is inf, so a zero gradient keeps rate 1.
  const Array rate = ops::minimum(ops::div(ops::scalar_like(threshold_, total), ops::sqrt(total)),
                                  ops::scalar_like(1.0, total));
  for (GradientEntry& e : entries) e.grad.assign(ops::mul(e.grad, rate.astype(e.grad.dtype())));
}

GradientHardClipping::GradientHardClipping(double lower, double upper) : lower_(lower), upper_(upper) {
  if (!(lower <= upper)) {
    throw ValueError(cat("GradientHardClipping: expected lower <= upper, got ", lower, " and ", upper));
  }
}

void GradientHardClipping::operator()(Optimizer&, std::vector<GradientEntry>& entries) const {
  for (GradientEntry& e : entries) {
    const Array& g = e.grad;
    g.assign(ops::minimum(ops::maximum(g, ops::scalar_like(lower_, g)), ops::scalar_like(upper_, g)));
  }
}

GradientLARS::GradientLARS(double eta, double weight_decay, double eps)
    : eta_(require_nonnegative(eta, "GradientLARS", "eta")),
      weight_decay_(require_nonnegative(weight_decay, "GradientLARS", "weight_decay")),
      eps_(require_nonnegative(eps, "GradientLARS", "eps")) {}

void GradientLARS::operator()(Optimizer&, std::vector<GradientEntry>& entries) const {
  for (GradientEntry& e : entries) {
    if (e.rule->lars_skip()) continue;
    const Array w = e.param.data().astype(e.grad.dtype());
    const Array trust = lars_rate(w, e.grad, 1.0, eta_, weight_decay_, eps_, false).astype(e.grad.dtype());
    const Array u = weight_decay_ == 0 ? e.grad : ops::add(e.grad, w * weight_decay_);
    e.grad.assign(ops::mul(u, trust));
  }
}

}  // namespace kusari::optimizers
