// CPU unary, binary, where, axpby and momentum-step kernels: one strided loop per operation, computed
// in float for the half types; contiguous runs take a branch the compiler vectorises.

#include <algorithm>
#include <cmath>

#include <kusari/core/kernel_table.h>
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

template <class T>
void unary_typed(UnaryOp op, double param, const Array& x, const Array& out) {
  using C = compute_type_t<T>;
  const C p = static_cast<C>(param);
  switch (op) {
    case UnaryOp::neg: return map1<T, T>(x, out, [](C v) { return C(-v); });
    case UnaryOp::abs:
      return map1<T, T>(x, out, [](C v) {
        if constexpr (std::is_floating_point_v<C>) {
          return std::fabs(v);  // |-0.0| is +0.0
        } else {
          return v < C(0) ? C(-v) : v;
        }
      });
    case UnaryOp::square: return map1<T, T>(x, out, [](C v) { return C(v * v); });
    // NaN propagates through sign and relu (comparisons with NaN are false).
    case UnaryOp::sign: return map1<T, T>(x, out, [](C v) { return v != v ? v : C((v > C(0)) - (v < C(0))); });
    case UnaryOp::relu: return map1<T, T>(x, out, [](C v) { return v <= C(0) ? C(0) : v; });
    case UnaryOp::logical_not: return map1<T, bool>(x, out, [](C v) { return v == C(0); });
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case UnaryOp::exp: return map1<T, T>(x, out, [](C v) { return std::exp(v); });
      case UnaryOp::log: return map1<T, T>(x, out, [](C v) { return std::log(v); });
      case UnaryOp::sqrt: return map1<T, T>(x, out, [](C v) { return std::sqrt(v); });
      case UnaryOp::reciprocal: return map1<T, T>(x, out, [](C v) { return C(1) / v; });
      case UnaryOp::sigmoid:
        return map1<T, T>(x, out, [](C v) { return C(0.5) * std::tanh(C(0.5) * v) + C(0.5); });
      case UnaryOp::tanh: return map1<T, T>(x, out, [](C v) { return std::tanh(v); });
      case UnaryOp::leaky_relu: return map1<T, T>(x, out, [p](C v) { return v > C(0) ? v : p * v; });
      case UnaryOp::elu: return map1<T, T>(x, out, [p](C v) { return v > C(0) ? v : p * std::expm1(v); });
      case UnaryOp::pow_scalar: return map1<T, T>(x, out, [p](C v) { return std::pow(v, p); });
      default: break;
    }
  }
  throw DtypeError(cat("unary kernel: operation ", static_cast<int>(op), " is not defined for dtype ", x.dtype()));
}

template <class T>
void binary_typed(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  using C = compute_type_t<T>;
  switch (op) {
    case BinaryOp::add: return map2<T, T>(a, b, out, [](C x, C y) { return C(x + y); });
    case BinaryOp::sub: return map2<T, T>(a, b, out, [](C x, C y) { return C(x - y); });
    case BinaryOp::mul: return map2<T, T>(a, b, out, [](C x, C y) { return C(x * y); });
    case BinaryOp::div:
      if constexpr (std::is_floating_point_v<C>) {
        return map2<T, T>(a, b, out, [](C x, C y) { return x / y; });
      } else {
        return map2<T, T>(a, b, out, [](C x, C y) { return y == C(0) ? C(0) : C(x / y); });
      }
    case BinaryOp::pow:
      return map2<T, T>(a, b, out, [](C x, C y) { return static_cast<C>(std::pow(x, y)); });
    case BinaryOp::maximum:
      return map2<T, T>(a, b, out, [](C x, C y) { return (x != x || x > y) ? x : y; });
    case BinaryOp::minimum:
      return map2<T, T>(a, b, out, [](C x, C y) { return (x != x || x < y) ? x : y; });
    case BinaryOp::relu_grad: return map2<T, T>(a, b, out, [](C g, C y) { return y > C(0) ? g : C(0); });
    case BinaryOp::add_relu:
      return map2<T, T>(a, b, out, [](C x, C y) {
        const C s = C(x + y);
        return s <= C(0) ? C(0) : s;
      });
    case BinaryOp::equal: return map2<T, bool>(a, b, out, [](C x, C y) { return x == y; });
    case BinaryOp::not_equal: return map2<T, bool>(a, b, out, [](C x, C y) { return x != y; });
    case BinaryOp::less: return map2<T, bool>(a, b, out, [](C x, C y) { return x < y; });
    case BinaryOp::less_equal: return map2<T, bool>(a, b, out, [](C x, C y) { return x <= y; });
    case BinaryOp::greater: return map2<T, bool>(a, b, out, [](C x, C y) { return x > y; });
    case BinaryOp::greater_equal: return map2<T, bool>(a, b, out, [](C x, C y) { return x >= y; });
  }
}

void unary_kernel(UnaryOp op, double param, const Array& x, const Array& out) {
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      if (op != UnaryOp::logical_not) throw DtypeError("unary kernel: only logical_not is defined for bool");
      map1<bool, bool>(x, out, [](bool v) { return !v; });
    } else {
      unary_typed<T>(op, param, x, out);
    }
  });
}

void binary_kernel(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  visit_dtype(a.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      binary_typed<uint8_t>(op, a, b, out);  // bool bytes compare as 0 and 1
    } else {
      binary_typed<T>(op, a, b, out);
    }
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
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
    map2<T, T>(dst, x, dst, [a, b](C d, C v) { return a * d + b * v; });
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
