#include <kusari/functions/reshape_transpose.h>

#include <kusari/functions/function_helpers.h>

namespace kusari::functions {
namespace {

class Reshape final : public FunctionNode {
 public:
  explicit Reshape(Shape shape) : shape_(std::move(shape)) {}
  std::string label() const override { return "Reshape"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {x[0].reshape(shape_)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {reshape(gy[0], inputs()[0]->shape)};
  }

 private:
  Shape shape_;
};

}  // namespace

Variable reshape(const Variable& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return apply_single<Reshape>({x}, shape);
}

}  // namespace kusari::functions
