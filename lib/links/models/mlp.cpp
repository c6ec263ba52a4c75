#include <kusari/links/models/mlp.h>

#include <kusari/functions/activation.h>
#include <kusari/links/linear.h>

namespace kusari::links::models {
namespace {

std::string layer_name(int64_t i) { return cat("l", i); }

}  // namespace

MLP::MLP(int64_t n_units, int64_t n_out, int64_t n_layers) : n_layers_(n_layers) {
  if (n_layers < 1) throw ValueError(cat("MLP: expected n_layers >= 1, got ", n_layers));
  for (int64_t i = 1; i <= n_layers; ++i) {
    const int64_t in_size = i == 1 ? 0 : n_units;
    add_link(layer_name(i), std::make_shared<Linear>(LinearOptions(in_size, i == n_layers ? n_out : n_units)));
  }
}

Variable MLP::forward(const Variable& x) {
  Variable h = x;
  for (int64_t i = 1; i <= n_layers_; ++i) {
    h = child<Linear>(layer_name(i))->forward(h);
    if (i < n_layers_) h = functions::relu(h);
  }
  return h;
}

}  // namespace kusari::links::models
