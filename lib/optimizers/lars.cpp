#include <kusari/optimizers/lars.h>

#include <vector>

#include <kusari/kernels/optimizer_routines.h>
#include <kusari/kernels/routines.h>
#include <kusari/optimizers/numerics.h>

namespace kusari::optimizers {

namespace {

// Which parameters LARC clips: all or none (one parameter), or those of a bool mask (a group).
struct Clipping {
  bool all = false;
  Array mask;
};

// LARS's rate from the norms (0-d for one parameter, (P,) for a group): lr·ratio, or where clipped
// min(lr, ratio), with ratio = η‖w‖ / (‖g‖ + β‖w‖ + ε); lr where a norm is 0. The settings are arrays of
// the norms' dtype that broadcast against them.
Array rate_from_norms(const Array& w_norm, const Array& g_norm, const Array& lr, const Array& eta, const Array& beta,
                      const Array& eps, const Clipping& clip) {
  const Array ratio = ops::div(ops::mul(w_norm, eta), ops::add(ops::add(g_norm, ops::mul(w_norm, beta)), eps));
  const Array rate = clip.mask.defined() ? ops::where(clip.mask, ops::minimum(ratio, lr), ops::mul(ratio, lr))
                     : clip.all          ? ops::minimum(ratio, lr)
                                         : ops::mul(ratio, lr);
  return ops::where(both_positive(w_norm, g_norm), rate, lr);
}

// Per-parameter settings of LARS's rate, one entry per parameter.
struct RateSettings {
  std::vector<double> lr, eta, beta, eps, clip, skip;  // clip and skip: 1 or 0
};

// The rates of P parameters as a float64 (P,) array from their norms ((P,) arrays of one floating
// dtype, on one device): lr for skipped parameters (trust 1), else rate_from_norms elementwise in the
// norms' dtype (so that each equals the one lars_rate computes alone).
Array lars_rates(const Array& w_norm, const Array& g_norm, const RateSettings& s) {
  const auto p = static_cast<int64_t>(s.lr.size());
  std::vector<double> rows;
  for (const std::vector<double>* row : {&s.lr, &s.eta, &s.beta, &s.eps, &s.clip, &s.skip}) {
    rows.insert(rows.end(), row->begin(), row->end());
  }
  const Array table = Array::from_vector(rows, {6, p}, Dtype::float64, w_norm.device());
  const auto row = [&](int64_t r) { return table.get_item({r}); };
  const auto in_norm_dtype = [&](int64_t r) { return row(r).astype(w_norm.dtype()); };
  const Array zero = ops::scalar_like(0.0, row(4));
  const Array trusted = rate_from_norms(w_norm, g_norm, in_norm_dtype(0), in_norm_dtype(1), in_norm_dtype(2),
                                        in_norm_dtype(3), Clipping{false, ops::greater(row(4), zero)});
  return ops::where(ops::greater(row(5), zero), row(0), trusted.astype(Dtype::float64));
}

class LARSRule : public UpdateRule {
 public:
  explicit LARSRule(std::shared_ptr<const Hyperparameter> parent) : UpdateRule(std::move(parent), {"v"}) {}

 protected:
  // One parameter: a skipped one's rate is lr itself, without its norms.
  void update_core(const Array& data, const Array& grad) override {
    const double lr = hp("lr");
    const bool skip = lars_skip();
    const double beta = skip ? 0 : hp("weight_decay_rate");
    const Array rate = skip ? Array::from_vector(std::vector<double>{lr}, {1}, Dtype::float64, data.device())
                            : lars_rate(data, grad, lr, hp("eta"), beta, hp("eps"), hp("clip") != 0)
                                  .astype(Dtype::float64)
                                  .reshape({1});
    ops::momentum_steps({{data}, {state("v", data)}, {grad}, {hp("momentum")}, {beta}, rate, VelocityForm::descent});
  }

  // Every rule's norms in one squared_norms call, their rates elementwise, one momentum_steps call.
  void update_core_together(const std::vector<UpdateRule*>& rules, const std::vector<Array>& data,
                            const std::vector<Array>& grads) override {
    const auto n = static_cast<int64_t>(rules.size());
    std::vector<Array> both(data);
    both.insert(both.end(), grads.begin(), grads.end());
    const Array norms = ops::sqrt(ops::squared_norms(both));
    RateSettings s;
    MomentumTensors t;
    t.form = VelocityForm::descent;
    for (int64_t k = 0; k < n; ++k) {
      auto* rule = static_cast<LARSRule*>(rules[static_cast<size_t>(k)]);
      const bool skip = rule->lars_skip();
      const double beta = skip ? 0 : rule->hp("weight_decay_rate");
      s.lr.push_back(rule->hp("lr"));
      s.eta.push_back(rule->hp("eta"));
      s.beta.push_back(beta);
      s.eps.push_back(rule->hp("eps"));
      s.clip.push_back(rule->hp("clip") != 0 ? 1 : 0);
      s.skip.push_back(skip ? 1 : 0);
      t.w.push_back(data[static_cast<size_t>(k)]);
      t.v.push_back(rule->state("v", data[static_cast<size_t>(k)]));
      t.g.push_back(grads[static_cast<size_t>(k)]);
      t.momentum.push_back(rule->hp("momentum"));
      t.weight_decay.push_back(beta);
    }
    t.rate = lars_rates(norms.get_item({Slice{0, n}}), norms.get_item({Slice{n, 2 * n}}), s);
    ops::momentum_steps(t);
  }
};

}  // namespace

Array lars_rate(const Array& w, const Array& g, double lr, double eta, double beta, double eps, bool clip) {
  const Array w_norm = l2_norm(w), g_norm = l2_norm(g).astype(w_norm.dtype());
  const auto setting = [&](double value) { return ops::scalar_like(value, w_norm); };
  return rate_from_norms(w_norm, g_norm, setting(lr), setting(eta), setting(beta), setting(eps), Clipping{clip, {}});
}

LARS::LARS(const LARSOptions& options) : Optimizer(options.lr, options.weight_decay_rate) {
  hyperparam().define("momentum", require_unit_interval(options.momentum, "LARS", "momentum"));
  hyperparam().define("eta", require_nonnegative(options.eta, "LARS", "eta"));
  hyperparam().define("eps", require_nonnegative(options.eps, "LARS", "eps"));
  hyperparam().define("clip", options.clip ? 1 : 0);
}

std::unique_ptr<UpdateRule> LARS::create_update_rule() { return std::make_unique<LARSRule>(shared_hyperparam()); }

}  // namespace kusari::optimizers
