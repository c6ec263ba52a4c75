// Which batch normalizations the CUDA backend hands to cuDNN's fused kernels, and how (plain C++, so
// it runs in every build): half dtypes in both layouts and float32 channels-last, the layouts and fused
// operations cuDNN takes, and the size limits past which the channel passes run.

#include <doctest/doctest.h>

#include <kusari/core/array.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/cuda/detail/batch_norm_fusion.h>

using namespace kusari;
using namespace kusari::kernels::cuda;

namespace {

Array channels_last(const Shape& shape, Dtype dtype) {
  return in_order(Array::zeros(shape, dtype), MemoryOrder::channels_last);
}

}  // namespace

TEST_CASE("channels-last half and float32 inputs run persistent NHWC, the ReLU and residual fused for C % 4 == 0") {
  // cuDNN 9 has float16, bfloat16 and float32 instances of every semi-persistent NHWC kernel, the fused
  // ReLU's and residual's forward and backward included.
  for (const Dtype dtype : {Dtype::float16, Dtype::bfloat16, Dtype::float32}) {
    CAPTURE(dtype);
    const Array x = channels_last({4, 8, 3, 3}, dtype);
    const auto plain = batch_norm_fusion(x, false, false);
    REQUIRE(plain);
    CHECK(plain->channels_last);
    CHECK(plain->persistent);
    CHECK(plain->ops == FusedOps::batch_norm);
    const auto relu = batch_norm_fusion(x, false, true);
    REQUIRE(relu);
    CHECK(relu->ops == FusedOps::batch_norm_relu);
    const auto add_relu = batch_norm_fusion(x, true, true);
    REQUIRE(add_relu);
    CHECK(add_relu->ops == FusedOps::batch_norm_add_relu);
    CHECK_FALSE(batch_norm_fusion(x, true, false));  // a residual without a ReLU: the passes
    const Array odd = channels_last({4, 6, 3, 3}, dtype);
    CHECK(batch_norm_fusion(odd, false, false));
    CHECK_FALSE(batch_norm_fusion(odd, false, true));
    CHECK_FALSE(batch_norm_fusion(odd, true, true));
  }
}

TEST_CASE("row-major half inputs run plain spatial batch normalization, without fusion") {
  for (const Dtype dtype : {Dtype::float16, Dtype::bfloat16}) {
    for (const Shape& shape : {Shape{16, 8}, Shape{4, 8, 5}, Shape{4, 8, 3, 3}, Shape{2, 8, 2, 3, 3}}) {
      CAPTURE(dtype);
      INFO(shape);
      const auto f = batch_norm_fusion(Array::zeros(shape, dtype), false, false);
      REQUIRE(f);
      CHECK_FALSE(f->channels_last);
      CHECK_FALSE(f->persistent);
      CHECK_FALSE(batch_norm_fusion(Array::zeros(shape, dtype), false, true));
    }
  }
}

TEST_CASE("row-major float32, float64, strided views, tiny channels and batches past cuDNN's limit take the passes") {
  CHECK_FALSE(batch_norm_fusion(Array::zeros({4, 8, 3, 3}, Dtype::float32), false, false));
  CHECK_FALSE(batch_norm_fusion(Array::zeros({16, 8}, Dtype::float32), false, false));
  CHECK_FALSE(batch_norm_fusion(Array::zeros({4, 8, 3, 3}, Dtype::float64), false, false));
  CHECK_FALSE(batch_norm_fusion(channels_last({4, 8, 3, 3}, Dtype::float64), false, false));
  // One channel marked channels-last is the row-major planes' bytes: float32 takes the passes, half
  // precision cuDNN's spatial kernels.
  CHECK_FALSE(batch_norm_fusion(channels_last({4, 1, 3, 3}, Dtype::float32), false, false));
  const auto grey = batch_norm_fusion(channels_last({4, 1, 3, 3}, Dtype::float16), false, false);
  REQUIRE(grey);
  CHECK_FALSE(grey->channels_last);
  CHECK_FALSE(grey->persistent);
  const Array strided = Array::zeros({8, 4, 3, 3}, Dtype::float16).transpose({1, 0, 2, 3});
  CHECK_FALSE(batch_norm_fusion(strided, false, false));
  CHECK_FALSE(batch_norm_fusion(Array::zeros({1, 8, 1, 1}, Dtype::float16), false, false));
  CHECK_FALSE(batch_norm_fusion(Array::zeros({0, 8}, Dtype::float16), false, false));
  CHECK(batch_norm_fusion(Array::zeros({kMostDnnBatch, 2}, Dtype::float16), false, false));
  CHECK_FALSE(batch_norm_fusion(Array::zeros({kMostDnnBatch + 1, 2}, Dtype::float16), false, false));
  // 2^31 elements, never written (only its size and layout are read).
  CHECK_FALSE(batch_norm_fusion(Array::empty({4, 8, 1 << 13, 1 << 13}, Dtype::float16), false, false));
}
