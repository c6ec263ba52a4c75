// kusari's own memory-bound kernels at ResNet-50's shapes (batch 256 on a GPU, 8 elsewhere, or --batch),
// each routine called alone: a copy into channels-last order, batch normalization's forward and backward
// (with the ReLU; with the residual and the ReLU), its two channel passes, the elementwise maps of a
// block's end, max pooling's forward and backward, the global average pooling, and the optimizer's
// multi-tensor launches over ResNet-50's parameters. In --dtype (default float16), channels-last unless
// --channels-last 0. Each line ends with the bytes one call must move (its operands read once and its
// results written once; a backend's own records, such as max pooling's winners, are not counted), the
// rate that gives, and that rate as a fraction of the device's copy of contiguous memory measured first
// in the same run (one cudaMemcpy on a GPU, memcpy on the threads on the CPU):
// "name: X ms/step, Y samples/s bytes_mb=B gb_s=G copy_fraction=F". --only NAME,... runs those workloads
// alone after the copy. bench/torch_kernels_gpu.py is the twin.

#include <algorithm>
#include <cstring>

#include <kusari/kernels/layer_routines.h>
#include <kusari/kernels/optimizer_routines.h>

#include "train_bench.h"

using namespace kusari;

namespace {

// One routine to time: the bytes one call must move, and the call.
struct Workload {
  double bytes;
  std::function<void()> call;
};

// A workload's line's name, and what makes its operands (on the device) when its turn comes, so that
// only one workload's are held.
struct WorkloadMaker {
  std::string name;
  std::function<Workload()> make;
};

// What every workload's operands are made from.
struct Setting {
  int64_t batch;
  Dtype dtype;
  Device device;
  MemoryOrder order;
};

// Normal values of `shape` in the setting's dtype, order and device (seeded by `seed`).
Array activation(const Setting& s, const Shape& shape, uint64_t seed) {
  return in_order(Array::normal(shape, 0, 1, seed, s.dtype, s.device), s.order);
}

// A (C,) parameter of batch normalization in the setting's dtype.
Array channel_parameter(const Setting& s, int64_t channels, double value) {
  return Array::full({channels}, value, s.dtype, s.device);
}

// Bytes of the arrays together.
double bytes_of(const std::vector<Array>& arrays) {
  double total = 0;
  for (const Array& a : arrays) total += static_cast<double>(a.nbytes());
  return total;
}

// The device's copy of contiguous memory, the line every other is held against: a copy between two
// arrays of one dtype and layout (one cudaMemcpy on a GPU), memcpy on the threads on the CPU.
Workload copy_reference(const Setting& s, const Shape& shape) {
  const Array x = activation(s, shape, 1).contiguous(), out = Array::empty(x.shape(), x.dtype(), s.device);
  if (s.device.type != DeviceType::cpu) return {bytes_of({x, out}), [x, out] { out.assign(x); }};
  return {bytes_of({x, out}), [x, out] {
            const auto* from = static_cast<const char*>(x.host_data());
            auto* to = static_cast<char*>(out.host_data());
            parallel_for(x.nbytes(), int64_t{1} << 20, [&](int64_t begin, int64_t end) {
              std::memcpy(to + begin, from + begin, static_cast<size_t>(end - begin));
            });
          }};
}

// kusari's own copy kernel between memory orders: a row-major array made channels-last.
Workload to_channels_last(const Setting& s, const Shape& shape) {
  const Array x = Array::normal(shape, 0, 1, 19, s.dtype, s.device);
  return {2 * bytes_of({x}), [=] { in_order(x, MemoryOrder::channels_last); }};
}

// Training-mode batch normalization's forward with the ReLU fused, plus `residual` added before it
// when `with_residual`.
Workload batch_norm_forward(const Setting& s, const Shape& shape, bool with_residual) {
  const Array x = activation(s, shape, 2), residual = with_residual ? activation(s, shape, 3) : Array();
  const Array gamma = channel_parameter(s, shape[1], 1), beta = channel_parameter(s, shape[1], 0);
  const double bytes = 2 * bytes_of({x}) + (with_residual ? bytes_of({residual}) : 0);
  return {bytes, [=] { ops::batch_normalization(x, gamma, beta, residual, 1e-5, true); }};
}

// batch_norm_forward's backward to x, gamma and beta. It must read x and gy and write gx, and read the
// forward's output y too after a residual (the ReLU's gate); a backend whose backward also reads y
// without one (cuDNN's fused ReLU) moves more than it must, and its line shows it.
Workload batch_norm_backward(const Setting& s, const Shape& shape, bool with_residual) {
  const Array x = activation(s, shape, 4), residual = with_residual ? activation(s, shape, 5) : Array();
  const Array gamma = channel_parameter(s, shape[1], 1), beta = channel_parameter(s, shape[1], 0);
  const Array gy = activation(s, shape, 6);
  const BatchNormForwardResult forward = ops::batch_normalization(x, gamma, beta, residual, 1e-5, true);
  const Array y = forward.statistics.backward_reads_output ? forward.y : Array();
  const double bytes = (with_residual ? 4 : 3) * bytes_of({x});
  return {bytes, [=] {
            ops::batch_normalization_backward(x, gamma, gy, y, forward.statistics, true, true);
          }};
}

// The first channel pass: per channel Σx and Σx·y.
Workload channel_sums(const Setting& s, const Shape& shape) {
  const Array x = activation(s, shape, 7), y = activation(s, shape, 8);
  return {bytes_of({x, y}), [=] { ops::channel_sums(x, y); }};
}

// The second channel pass: a·x + b·y + d per channel, then the ReLU.
Workload channel_affine(const Setting& s, const Shape& shape) {
  const Array x = activation(s, shape, 9), y = activation(s, shape, 10);
  const auto coefficient = [&](double value) { return Array::full({shape[1]}, value, Dtype::float64, s.device); };
  const Array a = coefficient(0.5), b = coefficient(-0.25), d = coefficient(0.125);
  return {bytes_of({x, y, x}), [=] { ops::channel_affine(x, a, y, b, d, {}, true); }};
}

// A binary elementwise map of two activations of `shape`.
Workload binary(const Setting& s, const Shape& shape, Array (*map)(const Array&, const Array&)) {
  const Array a = activation(s, shape, 11), b = activation(s, shape, 12);
  return {bytes_of({a, b, a}), [=] { map(a, b); }};
}

// The ReLU's forward.
Workload relu(const Setting& s, const Shape& shape) {
  const Array x = activation(s, shape, 13);
  return {bytes_of({x, x}), [=] { ops::relu(x); }};
}

// max pooling's window and stride in ResNet-50's stem: 3x3, stride 2, padding 1.
constexpr Pool2dGeometry kStemPooling{3, 3, 2, 2, 1, 1};

// The pooled shape of `shape` under kStemPooling.
Shape stem_pooled(const Shape& shape) { return {shape[0], shape[1], (shape[2] - 1) / 2 + 1, (shape[3] - 1) / 2 + 1}; }

// Max pooling's forward (x read, y written).
Workload max_pool_forward(const Setting& s, const Shape& shape) {
  const Array x = activation(s, shape, 14);
  const Shape y_shape = stem_pooled(shape);
  const double bytes = bytes_of({x}) + static_cast<double>(y_shape.numel()) * static_cast<double>(itemsize(s.dtype));
  return {bytes, [=] { ops::max_pooling_2d(x, kStemPooling, y_shape); }};
}

// Max pooling's backward: gy added at each window's winner (gy read, gx written).
Workload max_pool_backward(const Setting& s, const Shape& shape) {
  const Array x = activation(s, shape, 15);
  const Shape y_shape = stem_pooled(shape);
  const MaxPool2dResult forward = ops::max_pooling_2d(x, kStemPooling, y_shape);
  const Array gy = activation(s, y_shape, 16);
  return {bytes_of({gy, x}),
          [=] { ops::max_pooling_2d_scatter(gy, *forward.winners, shape); }};
}

// The global average pooling's forward (functions::global_average_pooling_2d: a sum and a division).
Workload global_average_pool_forward(const Setting& s, const Shape& shape) {
  const Variable x(activation(s, shape, 17), false);
  const double bytes = bytes_of({x.data()}) * (1 + 1.0 / static_cast<double>(shape[2] * shape[3]));
  return {bytes, [=] {
            auto guard = no_backprop_mode();
            functions::global_average_pooling_2d(x);
          }};
}

// The global average pooling's forward and backward to x.
Workload global_average_pool_forward_backward(const Setting& s, const Shape& shape) {
  const Array data = activation(s, shape, 18);
  const double bytes = 2 * bytes_of({data}) * (1 + 1.0 / static_cast<double>(shape[2] * shape[3]));
  return {bytes, [=] {
            Variable x(data);
            Variable y = functions::global_average_pooling_2d(x);
            y.set_grad(Array::ones(y.shape(), y.dtype(), y.data().device()));
            y.backward();
          }};
}

// ResNet-50's parameters' shapes (the model made once: its 25.6 million initial values take a while).
const std::vector<Shape>& resnet50_parameter_shapes() {
  static const std::vector<Shape> shapes = [] {
    std::vector<Shape> made;
    for (auto& [path, param] : L::models::ResNet50(1000).namedparams()) made.push_back(param.data().shape());
    return made;
  }();
  return shapes;
}

// Arrays of `shapes` in `dtype` on the device, normal values (seeded from `seed`).
std::vector<Array> parameter_arrays(const Setting& s, const std::vector<Shape>& shapes, Dtype dtype, uint64_t seed) {
  std::vector<Array> arrays;
  for (const Shape& shape : shapes) arrays.push_back(Array::normal(shape, 0, 0.01, seed++, dtype, s.device));
  return arrays;
}

// The loss scaler's check that every gradient (the setting's dtype) is finite.
Workload all_finite(const Setting& s) {
  const std::vector<Array> grads = parameter_arrays(s, resnet50_parameter_shapes(), s.dtype, 100);
  return {bytes_of(grads), [=] { ops::all_finite(grads); }};
}

// Widening a half-precision step's gradients into float32 (copy_tensors), skipped for float32.
Workload widen_gradients(const Setting& s) {
  const std::vector<Shape>& shapes = resnet50_parameter_shapes();
  const std::vector<Array> grads = parameter_arrays(s, shapes, s.dtype, 200);
  const std::vector<Array> wide = parameter_arrays(s, shapes, Dtype::float32, 300);
  return {bytes_of(grads) + bytes_of(wide), [=] { ops::copy_tensors(grads, wide); }};
}

// MomentumSGD's step of every float32 (master) parameter of ResNet-50 in one call (w, v, g read; w, v
// written).
Workload momentum_steps(const Setting& s) {
  const std::vector<Shape>& shapes = resnet50_parameter_shapes();
  MomentumTensors tensors;
  tensors.w = parameter_arrays(s, shapes, Dtype::float32, 400);
  tensors.v = parameter_arrays(s, shapes, Dtype::float32, 500);
  tensors.g = parameter_arrays(s, shapes, Dtype::float32, 600);
  tensors.momentum.assign(shapes.size(), 0.9);
  tensors.weight_decay.assign(shapes.size(), 1e-4);
  tensors.rate = Array::full({static_cast<int64_t>(shapes.size())}, 0.1, Dtype::float64, s.device);
  const double bytes = 2 * bytes_of(tensors.w) + 2 * bytes_of(tensors.v) + bytes_of(tensors.g);
  return {bytes, [=] { ops::momentum_steps(tensors); }};
}

// Every workload, in the order they run (the copy first: the others' lines are held against it).
std::vector<WorkloadMaker> workloads(const Setting& s) {
  const int64_t n = s.batch;
  const Shape stem{n, 64, 112, 112}, block_end{n, 256, 56, 56}, last{n, 2048, 7, 7};
  std::vector<WorkloadMaker> list{
      {"copy_reference", [=] { return copy_reference(s, block_end); }},
      {"to_channels_last", [=] { return to_channels_last(s, block_end); }},
      {"bn_relu_forward", [=] { return batch_norm_forward(s, stem, false); }},
      {"bn_relu_backward", [=] { return batch_norm_backward(s, stem, false); }},
      {"bn_add_relu_forward", [=] { return batch_norm_forward(s, block_end, true); }},
      {"bn_add_relu_backward", [=] { return batch_norm_backward(s, block_end, true); }},
      {"channel_sums", [=] { return channel_sums(s, block_end); }},
      {"channel_affine_relu", [=] { return channel_affine(s, block_end); }},
      {"add", [=] { return binary(s, block_end, ops::add); }},
      {"add_relu", [=] { return binary(s, block_end, ops::add_relu); }},
      {"relu_grad", [=] { return binary(s, block_end, ops::relu_grad); }},
      {"relu", [=] { return relu(s, block_end); }},
      {"max_pool_forward", [=] { return max_pool_forward(s, stem); }},
      {"max_pool_backward", [=] { return max_pool_backward(s, stem); }},
      {"global_average_pool_forward", [=] { return global_average_pool_forward(s, last); }},
      {"global_average_pool_forward_backward", [=] { return global_average_pool_forward_backward(s, last); }},
      {"all_finite_resnet50_grads", [=] { return all_finite(s); }},
      {"momentum_steps_resnet50", [=] { return momentum_steps(s); }}};
  if (s.dtype != Dtype::float32) list.push_back({"copy_tensors_resnet50_grads", [=] { return widen_gradients(s); }});
  return list;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Options defaults{.warmup = 3, .min_steps = 5, .seconds = 0.5};
  defaults.dtype = "float16";
  defaults.channels_last = true;
  std::vector<std::string> only;
  const bench::Options options = bench::setup(argc, argv, defaults, [&](CLI::App& app) {
    app.add_option("--only", only, "run only these workloads after the copy_reference (names as on the lines, "
                   "between the batch and the dtype; comma-separated)")
        ->delimiter(',');
  });
  const Device device = Device::parse(options.device);
  const DeviceScope on_device(device);
  const bool on_gpu = device.type == DeviceType::cuda;
  const Setting setting{options.batch > 0 ? options.batch : on_gpu ? 256 : 8, dtype_from_name(options.dtype), device,
                        options.channels_last ? MemoryOrder::channels_last : MemoryOrder::row_major};
  // A GPU step queues this many calls and then waits for them, so that the wait is not what is timed.
  const int calls_per_step = on_gpu ? 10 : 1;
  const char* device_name = on_gpu ? "cuda" : device.type == DeviceType::cpu ? "cpu" : "loopback";
  std::string suffix = "_" + options.dtype + "_" + device_name;
  if (options.channels_last) suffix += "_channels_last";
  const std::string prefix = "kernels_b" + std::to_string(setting.batch) + "_";
  double copy_gb_s = 0;
  const std::vector<WorkloadMaker> all = workloads(setting);
  for (const std::string& name : only) {
    if (std::none_of(all.begin(), all.end(), [&](const WorkloadMaker& w) { return w.name == name; })) {
      std::fprintf(stderr, "%s: --only: expected names of workloads, such as copy_reference, got %s\n", argv[0],
                   name.c_str());
      return 2;
    }
  }
  for (const WorkloadMaker& maker : all) {
    const bool reference = &maker == &all.front();
    if (!reference && !only.empty() && std::find(only.begin(), only.end(), maker.name) == only.end()) continue;
    const Workload workload = maker.make();
    const double ms = bench::mean_step_ms([&] {
      for (int i = 0; i < calls_per_step; ++i) workload.call();
      if (on_gpu) cuda::synchronize(device.index);
    }, options.warmup, options.min_steps, options.seconds) / calls_per_step;
    const double gb_s = workload.bytes / (ms * 1e6);
    if (reference) copy_gb_s = gb_s;
    std::printf("%s: %.4f ms/step, %.1f samples/s bytes_mb=%.1f gb_s=%.2f copy_fraction=%.3f\n",
                (prefix + maker.name + suffix).c_str(), ms, static_cast<double>(setting.batch) * 1000.0 / ms,
                workload.bytes / (1 << 20), gb_s, gb_s / copy_gb_s);
    std::fflush(stdout);
  }
}
