// The CUDA softmax cross-entropy against the CPU's: log softmax, per-sample and mean losses, label
// smoothing, ignored samples, int32 and int64 labels, strided scores, and the gradient; a label out of
// range makes its sample's results NaN and raises the CPU's error at the next synchronization.
// Part of test_cuda_device (its main skips without a GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <kusari/core/array.h>
#include <kusari/kernels/cuda/runtime.h>
#include <kusari/kernels/layer_routines.h>

#include "cuda_testing.h"

using namespace kusari;
using namespace kusari::testing;

namespace {

double tolerance(Dtype dtype) {
  return dtype == Dtype::float64 ? 1e-13 : dtype == Dtype::float32 ? 1e-5 : dtype == Dtype::float16 ? 4e-3 : 3e-2;
}

}  // namespace

TEST_CASE("loss, log softmax and gradient equal the CPU's for every dtype and target option") {
  const int64_t samples = 50, classes = 37;
  std::vector<int64_t> labels(samples);
  for (int64_t i = 0; i < samples; ++i) labels[static_cast<size_t>(i)] = (i * 7) % classes;
  labels[3] = -1;  // ignored
  for (const Dtype dtype : {Dtype::float32, Dtype::float64, Dtype::float16, Dtype::bfloat16}) {
    for (const Dtype label_dtype : {Dtype::int64, Dtype::int32}) {
      for (const bool mean : {true, false}) {
        for (const double smoothing : {0.0, 0.1}) {
          const std::string what = dtype_name(dtype) + ", labels " + dtype_name(label_dtype) + (mean ? ", mean" : "") +
                                   ", smoothing " + std::to_string(smoothing);
          const CrossEntropyTargets targets{-1, smoothing, mean};
          const Array x = Array::uniform({classes, samples}, -6, 6, 41, dtype).transpose();  // strided scores
          const Array t = Array::from_vector(labels, {samples}).astype(label_dtype);
          const auto [host_loss, host_log_p] = ops::softmax_cross_entropy(x, t, targets);
          const auto [device_loss, device_log_p] = ops::softmax_cross_entropy(x.to(gpu), t.to(gpu), targets);
          check_close(device_loss, host_loss, tolerance(dtype), "loss, " + what);
          check_close(device_log_p, host_log_p, tolerance(dtype), "log_p, " + what);
          const Array gy = mean ? Array::scalar(1.5, dtype) : Array::uniform({samples}, -1, 1, 42, dtype);
          check_close(ops::softmax_cross_entropy_grad(device_log_p, t.to(gpu), gy.to(gpu), targets),
                      ops::softmax_cross_entropy_grad(host_log_p, t, gy, targets), tolerance(dtype),
                      "gradient, " + what, Relative::to_largest);  // its values are far below 1: not to 1
        }
      }
    }
  }
}

TEST_CASE("a label outside [0, C) is raised with the CPU's message at the next synchronization, once") {
  const Array x = Array::zeros({4, 3}, Dtype::float32, gpu);
  const Array t = Array::from_vector<int64_t>({0, 1, 3, 2}, {4}).to(gpu);
  const std::string message = "softmax_cross_entropy: label 3 of sample 2 is outside [0, 3) for C = 3 classes";
  // The call queues its kernels and returns; reading the loss synchronizes and raises the fault.
  CrossEntropyTargets per_sample;
  per_sample.mean = false;
  const auto [loss, log_p] = ops::softmax_cross_entropy(x, t, per_sample);
  try {
    loss.to(Device::cpu());
    FAIL("expected IndexError");
  } catch (const IndexError& e) {
    CHECK(std::string(e.what()).find(message) != std::string::npos);
  }
  // Raised once: the sample's loss is NaN, the others' are the CPU's.
  const std::vector<double> losses = loss.to(Device::cpu()).to_vector<double>();
  CHECK(std::isnan(losses[2]));
  CHECK(losses[0] == doctest::Approx(std::log(3.0)));
  // The gradient's kernel checks too, and cuda::synchronize raises as a copy does.
  const Array gy = Array::ones({4}, Dtype::float32, gpu);
  const Array gx = ops::softmax_cross_entropy_grad(log_p, t, gy, per_sample);
  CHECK_THROWS_AS(cuda::synchronize(0), IndexError);
  CHECK(std::isnan(gx.to(Device::cpu()).get_item({2, 0}).item<double>()));
  // A mean over ignored and kept labels stays on the device and equals the CPU's.
  CrossEntropyTargets ignoring;
  ignoring.ignore_label = -1;
  const Array kept = Array::from_vector<int64_t>({0, -1, 2, -1}, {4});
  const Array host_mean = ops::softmax_cross_entropy(Array::zeros({4, 3}), kept, ignoring).first;
  check_close(ops::softmax_cross_entropy(x, kept.to(gpu), ignoring).first, host_mean, 1e-6, "mean over kept labels");
}
