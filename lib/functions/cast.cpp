#include <kusari/functions/cast.h>

#include <kusari/functions/function_helpers.h>

namespace kusari::functions {
namespace {

class Cast final : public FunctionNode {
 public:
  explicit Cast(Dtype dtype) : dtype_(dtype) {}
  std::string label() const override { return "Cast"; }
  std::vector<Array> forward(const std::vector<Array>& x) override { return {x[0].astype(dtype_)}; }
  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {cast(gy[0], inputs()[0]->dtype)};
  }

 private:
  Dtype dtype_;
};

}  // namespace

Variable cast(const Variable& x, Dtype dtype) {
  if (x.dtype() == dtype) return x;
  return apply_single<Cast>({x}, dtype);
}

}  // namespace kusari::functions
