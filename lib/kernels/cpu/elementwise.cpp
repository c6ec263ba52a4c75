// CPU unary, binary, where, axpby and momentum-step kernels: one strided loop per operation over the
// function objects both backends share (elementwise_functions.h), computed in float for the half
// types; contiguous runs take a branch the compiler vectorises.

#include <algorithm>
#include <cmath>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/detail/elementwise_functions.h>
#include <kusari/kernels/ops/elementwise.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

// Applies f elementwise from x (type T) to out (type U).
template <class T, class U, class F>
void map1(const Array& x, const Array& out, F f) {
  strided_loop<T, U>({&x, &out}, [f](std::tuple<T*, U*> p, const std::array<int64_t, 2>& s, int64_t n) {
    auto [in, o] = p;
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = store<U>(f(load(in[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * s[1]] = store<U>(f(load(in[i * s[0]])));
    }
  });
}

// Applies f elementwise from a, b (type T) to out (type U).
template <class T, class U, class F>
void map2(const Array& a, const Array& b, const Array& out, F f) {
  strided_loop<T, T, U>({&a, &b, &out}, [f](std::tuple<T*, T*, U*> p, const std::array<int64_t, 3>& s, int64_t n) {
    auto [x, y, o] = p;
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = store<U>(f(load(x[i]), load(y[i])));
    } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
      const auto scalar = load(y[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = store<U>(f(load(x[i]), scalar));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * s[2]] = store<U>(f(load(x[i * s[0]]), load(y[i * s[1]])));
    }
  });
}

void unary_kernel(UnaryOp op, double param, const Array& x, const Array& out) {
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      if (op != UnaryOp::logical_not) throw DtypeError("unary kernel: only logical_not is defined for bool");
      map1<bool, bool>(x, out, elementwise::LogicalNot<bool>{});
    } else {
      using C = compute_type_t<T>;
      elementwise::visit_unary<C>(op, param, x.dtype(), [&]<class F>(F f) {
        map1<T, elementwise::result_element_t<T, F, C>>(x, out, f);
      });
    }
  });
}

void binary_kernel(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  visit_dtype(a.dtype(), [&]<class D>() {
    using T = std::conditional_t<std::is_same_v<D, bool>, uint8_t, D>;  // bool bytes compute as 0 and 1
    using C = compute_type_t<T>;
    elementwise::visit_binary<C>(op, [&]<class F>(F f) {
      map2<T, elementwise::result_element_t<T, F, C, C>>(a, b, out, f);
    });
  });
}

void where_kernel(const Array& cond, const Array& a, const Array& b, const Array& out) {
  visit_dtype(out.dtype(), [&]<class T>() {
    strided_loop<bool, T, T, T>({&cond, &a, &b, &out},
                                [](std::tuple<bool*, T*, T*, T*> p, const std::array<int64_t, 4>& s, int64_t n) {
                                  auto [c, x, y, o] = p;
                                  for (int64_t i = 0; i < n; ++i) o[i * s[3]] = c[i * s[0]] ? x[i * s[1]] : y[i * s[2]];
                                });
  });
}

void axpby_kernel(double alpha, const Array& dst, double beta, const Array& x) {
  visit_floating_dtype(dst.dtype(), "axpby kernel", [&]<class T>() {
    using C = compute_type_t<T>;
    map2<T, T>(dst, x, dst, elementwise::Axpby<C>{static_cast<C>(alpha), static_cast<C>(beta)});
  });
}

void momentum_step_kernel(const Array& w, const Array& v, const Array& g, double momentum, double lr) {
  visit_floating_dtype(w.dtype(), "momentum_step kernel", [&]<class T>() {
    using C = compute_type_t<T>;
    const C mu = static_cast<C>(momentum), rate = static_cast<C>(lr);
    strided_loop<T, T, T>({&w, &v, &g}, [mu, rate](std::tuple<T*, T*, T*> p, const std::array<int64_t, 3>& s,
                                                   int64_t n) {
      // Plain pointers, not a structured binding: the OpenMP simd region below may not capture one.
      T* const weights = std::get<0>(p);
      T* const velocity = std::get<1>(p);
      T* const grads = std::get<2>(p);
      const auto update = [mu, rate](T& w_i, T& v_i, const T& g_i) {
        v_i = store<T>(mu * load(v_i) - rate * load(g_i));
        w_i = store<T>(load(w_i) + load(v_i));
      };
      if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) update(weights[i], velocity[i], grads[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) update(weights[i * s[0]], velocity[i * s[1]], grads[i * s[2]]);
      }
    });
  });
}

}  // namespace

void register_elementwise_kernels() {
  install_kernel<kernel_ops::Unary>(DeviceType::cpu, "cpu", unary_kernel);
  install_kernel<kernel_ops::Binary>(DeviceType::cpu, "cpu", binary_kernel);
  install_kernel<kernel_ops::Where>(DeviceType::cpu, "cpu", where_kernel);
  install_kernel<kernel_ops::Axpby>(DeviceType::cpu, "cpu", axpby_kernel);
  install_kernel<kernel_ops::MomentumStep>(DeviceType::cpu, "cpu", momentum_step_kernel);
}

}  // namespace kusari::kernels::cpu
