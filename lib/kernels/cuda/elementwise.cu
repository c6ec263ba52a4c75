// CUDA unary, binary, where, axpby and momentum-step kernels: one grid-stride kernel per operation over
// the function objects the CPU's loops call (elementwise_functions.h), computed in float for the half
// types, operands of any strides (broadcast ones too).

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/elementwise_functions.h>
#include <kusari/kernels/ops/elementwise.h>

namespace kusari::kernels::cuda {
namespace {

template <class T, class U, class F>
__global__ void unary_elements(KernelLayout<2> layout, F f) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) { element<U>(layout, 1, i) = store<U>(f(load(element<T>(layout, 0, i)))); }
}

template <class T, class U, class F>
__global__ void binary_elements(KernelLayout<3> layout, F f) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    element<U>(layout, 2, i) = store<U>(f(load(element<T>(layout, 0, i)), load(element<T>(layout, 1, i))));
  }
}

template <class T>
__global__ void where_elements(KernelLayout<4> layout) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    element<T>(layout, 3, i) = element<bool>(layout, 0, i) ? element<T>(layout, 1, i) : element<T>(layout, 2, i);
  }
}

template <class T, class C>
__global__ void momentum_step_elements(KernelLayout<3> layout, C momentum, C lr) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    T& w = element<T>(layout, 0, i);
    T& v = element<T>(layout, 1, i);
    v = store<T>(momentum * load(v) - lr * load(element<T>(layout, 2, i)));
    w = store<T>(load(w) + load(v));
  }
}

void unary_kernel(UnaryOp op, double param, const Array& x, const Array& out) {
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      if (op != UnaryOp::logical_not) throw DtypeError("unary kernel: only logical_not is defined for bool");
      launch<2>("unary kernel", {&x, &out}, unary_elements<bool, bool, elementwise::LogicalNot<bool>>,
                elementwise::LogicalNot<bool>{});
    } else {
      using C = compute_type_t<T>;
      elementwise::visit_unary<C>(op, param, x.dtype(), [&]<class F>(F f) {
        launch<2>("unary kernel", {&x, &out}, unary_elements<T, elementwise::result_element_t<T, F, C>, F>, f);
      });
    }
  });
}

void binary_kernel(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  visit_dtype(a.dtype(), [&]<class D>() {
    using T = std::conditional_t<std::is_same_v<D, bool>, uint8_t, D>;  // bool bytes compute as 0 and 1
    using C = compute_type_t<T>;
    elementwise::visit_binary<C>(op, [&]<class F>(F f) {
      launch<3>("binary kernel", {&a, &b, &out}, binary_elements<T, elementwise::result_element_t<T, F, C, C>, F>, f);
    });
  });
}

void where_kernel(const Array& cond, const Array& a, const Array& b, const Array& out) {
  visit_dtype(out.dtype(), [&]<class T>() { launch<4>("where kernel", {&cond, &a, &b, &out}, where_elements<T>); });
}

void axpby_kernel(double alpha, const Array& dst, double beta, const Array& x) {
  visit_floating_dtype(dst.dtype(), "axpby kernel", [&]<class T>() {
    using C = compute_type_t<T>;
    using F = elementwise::Axpby<C>;
    launch<3>("axpby kernel", {&dst, &x, &dst}, binary_elements<T, T, F>,
              F{static_cast<C>(alpha), static_cast<C>(beta)});
  });
}

void momentum_step_kernel(const Array& w, const Array& v, const Array& g, double momentum, double lr) {
  visit_floating_dtype(w.dtype(), "momentum_step kernel", [&]<class T>() {
    using C = compute_type_t<T>;
    launch<3>("momentum_step kernel", {&w, &v, &g}, momentum_step_elements<T, C>, static_cast<C>(momentum),
              static_cast<C>(lr));
  });
}

}  // namespace

void register_elementwise_kernels() {
  install_kernel<kernel_ops::Unary>(DeviceType::cuda, "cuda", unary_kernel);
  install_kernel<kernel_ops::Binary>(DeviceType::cuda, "cuda", binary_kernel);
  install_kernel<kernel_ops::Where>(DeviceType::cuda, "cuda", where_kernel);
  install_kernel<kernel_ops::Axpby>(DeviceType::cuda, "cuda", axpby_kernel);
  install_kernel<kernel_ops::MomentumStep>(DeviceType::cuda, "cuda", momentum_step_kernel);
}

}  // namespace kusari::kernels::cuda
