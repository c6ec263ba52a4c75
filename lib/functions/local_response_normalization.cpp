#include <kusari/functions/local_response_normalization.h>

#include <kusari/functions/arithmetic.h>
#include <kusari/functions/cast.h>
#include <kusari/functions/function_helpers.h>
#include <kusari/functions/math.h>
#include <kusari/kernels/routines.h>

namespace kusari::functions {
namespace {

// s[:, c] = sum of x[:, c - half ... c + half] over the channels that exist. The window is symmetric,
// so this linear map is its own adjoint and backward applies it to the output gradient.
class ChannelWindowSum final : public FunctionNode {
 public:
  explicit ChannelWindowSum(int64_t half) : half_(half) {}
  std::string label() const override { return "ChannelWindowSum"; }

  std::vector<Array> forward(const std::vector<Array>& in) override {
    const Array& x = in[0];
    const int64_t channels = x.shape()[1];
    const Array sum = x.copy();
    for (int64_t shift = 1; shift <= half_ && shift < channels; ++shift) {
      ops::add_to(channels_from(sum, shift, channels), channels_from(x, 0, channels - shift));
      ops::add_to(channels_from(sum, 0, channels - shift), channels_from(x, shift, channels));
    }
    return {sum};
  }

  std::vector<Variable> backward(const std::vector<size_t>&, const std::vector<Variable>& gy) override {
    return {apply_single<ChannelWindowSum>({gy[0]}, half_)};
  }

 private:
  // The view of channels [begin, end) of a (N, C, ...) array.
  static Array channels_from(const Array& a, int64_t begin, int64_t end) {
    return a.get_item({Slice{}, Slice{begin, end}});
  }

  int64_t half_;
};

}  // namespace

Variable local_response_normalization(const Variable& x, int64_t n, double k, double alpha, double beta) {
  require_floating(x, "local_response_normalization");
  if (x.ndim() < 2) {
    throw ShapeError(cat("local_response_normalization: expected an input of shape (N, C, ...), got ", x.shape()));
  }
  if (n < 1) throw ValueError(cat("local_response_normalization: expected a window n >= 1, got ", n));
  const Dtype compute = x.dtype() == Dtype::float64 ? Dtype::float64 : Dtype::float32;
  const Variable xc = cast(x, compute);
  const Variable window = apply_single<ChannelWindowSum>({square(xc)}, n / 2);
  return cast(xc * pow(k + alpha * window, -beta), x.dtype());
}

}  // namespace kusari::functions
