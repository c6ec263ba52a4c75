#include <kusari/functions/noise.h>

#include <kusari/core/config.h>
#include <kusari/core/random.h>
#include <kusari/functions/arithmetic.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// 1 / (1 - ratio) with probability 1 - ratio, else 0, drawn from the default generator in like's dtype.
Array dropout_mask(const Array& like, double ratio) {
  Generator& generator = default_generator();
  const uint64_t first = generator.advance(static_cast<uint64_t>(like.size()));
  Array keep = Array::empty(like.shape(), like.dtype(), like.device());
  ops::fill_random(keep, Distribution::bernoulli, generator.seed(), first, 1 - ratio, 0);
  return ops::mul(keep, ops::scalar_like(1 / (1 - ratio), keep));
}

class Dropout final : public FunctionNode {
 public:
  explicit Dropout(Array mask) : mask_(std::move(mask)) {}
  std::string label() const override { return "Dropout"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {ops::mul(x[0], mask_)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {mul(gy[0], Variable(mask_, false))};
  }

 private:
  Array mask_;
};

}  // namespace

Variable dropout(const Variable& x, double ratio) {
  require_floating(x, "dropout");
  if (!(ratio >= 0 && ratio < 1)) throw ValueError(cat("dropout: expected a ratio in [0, 1), got ", ratio));
  if (!config().train) return x;
  return apply_single<Dropout>({x}, dropout_mask(x.data(), ratio));
}

}  // namespace kusari::functions
