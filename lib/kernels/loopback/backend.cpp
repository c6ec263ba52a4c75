// The loopback backend: a kernel for every contract that checks that each operand is on one loopback
// device, runs the CPU's kernel on host views of the operands, and returns its arrays in loopback
// memory (a KernelState stays the CPU's own record, opaque above the seam). Code above lib/kernels that reads host memory without a transfer fails on this device the
// way it would on a GPU, while every number stays the CPU's.

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <kusari/core/channel_gate.h>
#include <kusari/core/kernel_table.h>
#include <kusari/core/memory_order.h>
#include <kusari/kernels/loopback/detail/allocator.h>
#include <kusari/kernels/loopback/detail/registration.h>
#include <kusari/kernels/ops/convolution.h>
#include <kusari/kernels/ops/copy.h>
#include <kusari/kernels/ops/elementwise.h>
#include <kusari/kernels/ops/linalg.h>
#include <kusari/kernels/ops/loss.h>
#include <kusari/kernels/ops/normalization.h>
#include <kusari/kernels/ops/optimizer.h>
#include <kusari/kernels/ops/pooling.h>
#include <kusari/kernels/ops/random.h>
#include <kusari/kernels/ops/reduction.h>

namespace kusari::kernels::loopback {
namespace {

// The CPU's kernel of Op (installed before this backend's).
template <class Op>
typename Op::Fn* cpu_kernel() {
  return KernelTable<Op>::entries[static_cast<size_t>(DeviceType::cpu)].load(std::memory_order_acquire);
}

// The device of an operation's operands: the first defined array's, which every other must share.
struct OperandDevice {
  const char* op;
  bool found = false;
  Device device;

  void note(const Array& a) {
    if (!a.defined() || found) return;
    if (a.device().type != DeviceType::loopback) {
      throw DeviceError(cat(op, ": the loopback kernel got an operand on ", a.device()));
    }
    device = a.device();
    found = true;
  }
  void note(const ChannelGate& gate) { note(gate.input); }
  void note(const BatchNormStatistics& statistics) { note(statistics.mean); }
  void note(const std::vector<Array>& arrays) {
    for (const Array& a : arrays) note(a);
  }
  void note(const MomentumTensors& t) { note(t.w); }
  template <class T>
  void note(const T&) {}
};

// The same elements seen as host memory, for the CPU kernel; throws unless a is on `device`.
Array host_view(const Array& a, const OperandDevice& on) {
  if (!a.defined()) return a;
  if (!(a.device() == on.device)) {
    throw DeviceError(cat(on.op, ": expected every operand on ", on.device, ", got one on ", a.device()));
  }
  auto storage = std::make_shared<Storage>();
  storage->data = a.storage()->data;
  storage->nbytes = a.storage()->nbytes;
  storage->device = Device::cpu();
  storage->owner = a.storage();
  return Array::from_storage(std::move(storage), a.shape(), a.strides(), a.offset(), a.dtype());
}
ChannelGate host_view(const ChannelGate& gate, const OperandDevice& on) {
  return {host_view(gate.input, on), host_view(gate.scale, on), host_view(gate.shift, on)};
}
BatchNormStatistics host_view(const BatchNormStatistics& s, const OperandDevice& on) {
  return {host_view(s.mean, on),  host_view(s.var, on), host_view(s.inv_std, on),  host_view(s.scale, on),
          host_view(s.shift, on), s.count,              s.residual, s.backward_reads_output, s.state};
}
std::vector<Array> host_view(const std::vector<Array>& arrays, const OperandDevice& on) {
  std::vector<Array> views;
  for (const Array& a : arrays) views.push_back(host_view(a, on));
  return views;
}
MomentumTensors host_view(const MomentumTensors& t, const OperandDevice& on) {
  return {host_view(t.w, on), host_view(t.v, on), host_view(t.g, on), t.momentum, t.weight_decay,
          host_view(t.rate, on), t.form};
}
template <class T>
const T& host_view(const T& value, const OperandDevice&) {
  return value;
}

// A CPU kernel's result copied into new memory of `device`, in the result's memory order.
Array on_device(const Array& result, const OperandDevice& on) {
  Array out = empty_in_order(result.shape(), memory_order_of(result), result.dtype(), on.device);
  cpu_kernel<kernel_ops::Copy>()(result, host_view(out, on));
  return out;
}
MaxPool2dResult on_device(const MaxPool2dResult& result, const OperandDevice& on) {
  return {on_device(result.y, on), result.winners};
}
Array on_device_if_defined(const Array& result, const OperandDevice& on) {
  return result.defined() ? on_device(result, on) : result;
}
BatchNormStatistics on_device(const BatchNormStatistics& s, const OperandDevice& on) {
  return {on_device(s.mean, on),  on_device(s.var, on), on_device(s.inv_std, on),  on_device(s.scale, on),
          on_device(s.shift, on), s.count,              s.residual, s.backward_reads_output, s.state};
}
BatchNormForwardResult on_device(const BatchNormForwardResult& result, const OperandDevice& on) {
  return {on_device(result.y, on), on_device(result.statistics, on)};
}
BatchNormGradients on_device(const BatchNormGradients& g, const OperandDevice& on) {
  return {on_device_if_defined(g.gx, on), on_device(g.ggamma, on), on_device(g.gbeta, on)};
}

// Op's loopback kernel: the operand check, then the CPU kernel on host views.
template <class Op, class Fn = typename Op::Fn>
struct Forwarded;
template <class Op, class R, class... A>
struct Forwarded<Op, R(A...)> {
  static R run(A... args) {
    OperandDevice on{Op::name, false, Device::cpu()};
    (on.note(args), ...);
    if (!on.found) throw DeviceError(cat(Op::name, ": the loopback kernel got no array operand"));
    if constexpr (std::is_void_v<R>) {
      cpu_kernel<Op>()(host_view(args, on)...);
    } else {
      return on_device(cpu_kernel<Op>()(host_view(args, on)...), on);
    }
  }
};

template <class... Ops>
void forward_to_cpu() {
  (install_kernel<Ops>(DeviceType::loopback, "loopback", &Forwarded<Ops>::run), ...);
}

// Host <-> loopback and loopback <-> loopback copies, as a GPU backend's transfers.
void transfer(const Array& src, const Array& dst) {
  const auto view = [](const Array& a) {
    if (a.device().type == DeviceType::cpu) return a;
    if (a.device().type != DeviceType::loopback) {
      throw DeviceError(cat("transfer: the loopback backend cannot reach ", a.device()));
    }
    return host_view(a, OperandDevice{"transfer", true, a.device()});
  };
  cpu_kernel<kernel_ops::Copy>()(view(src), view(dst));
}

}  // namespace

void register_loopback_backend() {
  register_allocator(DeviceType::loopback, &loopback_allocator());
  forward_to_cpu<kernel_ops::Copy, kernel_ops::Fill, kernel_ops::Unary, kernel_ops::Binary, kernel_ops::Where,
                 kernel_ops::MomentumStep, kernel_ops::Axpby, kernel_ops::Reduce, kernel_ops::TopKHits,
                 kernel_ops::Gemm, kernel_ops::Random, kernel_ops::SoftmaxCrossEntropy,
                 kernel_ops::SoftmaxCrossEntropyGrad, kernel_ops::Conv2d, kernel_ops::Conv2dBackwardData,
                 kernel_ops::Conv2dBackwardFilter, kernel_ops::MaxPool2d, kernel_ops::MaxPool2dScatter,
                 kernel_ops::MaxPool2dGather, kernel_ops::AveragePool2d, kernel_ops::AveragePool2dBackward,
                 kernel_ops::ChannelSums, kernel_ops::ChannelAffine, kernel_ops::BatchNormForward,
                 kernel_ops::BatchNormBackward, kernel_ops::BatchNormStatisticsOfSums,
                 kernel_ops::BatchNormBackwardCoefficients, kernel_ops::BatchNormRunningAverages,
                 kernel_ops::MomentumSteps, kernel_ops::SquaredNorms, kernel_ops::CopyTensors,
                 kernel_ops::AddScaledTensors, kernel_ops::AllFinite>();
  install_kernel<kernel_ops::Transfer>(DeviceType::loopback, "loopback", transfer);
}

}  // namespace kusari::kernels::loopback
