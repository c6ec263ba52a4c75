#include <kusari/links/linear.h>

#include <kusari/functions/matmul.h>
#include <kusari/links/initializers.h>
#include <kusari/links/lazy_param.h>

namespace kusari::links {

Linear::Linear(const LinearOptions& options) : out_size_(options.out_size_) {
  if (options.out_size_ < 1 || options.in_size_ < 0) {
    throw ValueError(cat("Linear: expected in_size >= 0 (0: inferred) and out_size >= 1, got ", options.in_size_,
                         " and ", options.out_size_));
  }
  add_uninitialized_param("W", options.initial_w_ ? options.initial_w_ : initializers::LeCunNormal());
  if (options.in_size_ > 0) initialize_param("W", {out_size_, options.in_size_});
  if (!options.nobias_) {
    add_param("b", {out_size_}, options.initial_bias_ ? options.initial_bias_ : initializers::Zero());
  }
}

Variable Linear::forward(const Variable& x) {
  if (!is_initialized("W")) {
    if (x.ndim() < 2) throw ShapeError(cat("Linear: expected an input of shape (N, ...), got ", x.shape()));
    int64_t features = 1;
    for (int64_t axis = 1; axis < x.ndim(); ++axis) features *= x.shape()[axis];
    initialize_lazy_param(*this, "W", {out_size_, features}, x);
  }
  return functions::linear(x, param("W"), is_initialized("b") ? param("b") : Variable());
}

}  // namespace kusari::links
