#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: the function each
// UnaryOp and BinaryOp computes on one element, as a small object, and the dispatch from an op to its
// object. The CPU's loops and the CUDA kernels call the same objects, so both backends compute one
// thing (the device's libm may round transcendental results differently in the last place).

#include <cmath>
#include <type_traits>

#include <kusari/core/error.h>
#include <kusari/kernels/detail/element_conversion.h>
#include <kusari/kernels/ops/elementwise.h>

namespace kusari::kernels::elementwise {

// -v.
template <class C>
struct Neg {
  KUSARI_HOST_DEVICE C operator()(C v) const { return C(-v); }
};
// |v| (|-0.0| is +0.0).
template <class C>
struct Abs {
  KUSARI_HOST_DEVICE C operator()(C v) const {
    if constexpr (std::is_floating_point_v<C>) {
      return std::fabs(v);
    } else {
      return v < C(0) ? C(-v) : v;
    }
  }
};
// v * v.
template <class C>
struct Square {
  KUSARI_HOST_DEVICE C operator()(C v) const { return C(v * v); }
};
// -1, 0 or 1; NaN stays NaN.
template <class C>
struct Sign {
  KUSARI_HOST_DEVICE C operator()(C v) const { return v != v ? v : C((v > C(0)) - (v < C(0))); }
};
// max(v, 0); NaN stays NaN (comparisons with NaN are false).
template <class C>
struct Relu {
  KUSARI_HOST_DEVICE C operator()(C v) const { return v <= C(0) ? C(0) : v; }
};
// v == 0, as bool.
template <class C>
struct LogicalNot {
  KUSARI_HOST_DEVICE bool operator()(C v) const { return v == C(0); }
};
// e^v.
template <class C>
struct Exp {
  KUSARI_HOST_DEVICE C operator()(C v) const { return std::exp(v); }
};
// ln v.
template <class C>
struct Log {
  KUSARI_HOST_DEVICE C operator()(C v) const { return std::log(v); }
};
// √v.
template <class C>
struct Sqrt {
  KUSARI_HOST_DEVICE C operator()(C v) const { return std::sqrt(v); }
};
// 1 / v.
template <class C>
struct Reciprocal {
  KUSARI_HOST_DEVICE C operator()(C v) const { return C(1) / v; }
};
// 1 / (1 + e^-v), through tanh (no overflow at either end).
template <class C>
struct Sigmoid {
  KUSARI_HOST_DEVICE C operator()(C v) const { return C(0.5) * std::tanh(C(0.5) * v) + C(0.5); }
};
// tanh v.
template <class C>
struct Tanh {
  KUSARI_HOST_DEVICE C operator()(C v) const { return std::tanh(v); }
};
// v where positive, slope · v elsewhere.
template <class C>
struct LeakyRelu {
  C slope;
  KUSARI_HOST_DEVICE C operator()(C v) const { return v > C(0) ? v : slope * v; }
};
// v where positive, alpha · (e^v - 1) elsewhere.
template <class C>
struct Elu {
  C alpha;
  KUSARI_HOST_DEVICE C operator()(C v) const { return v > C(0) ? v : alpha * std::expm1(v); }
};
// v^exponent.
template <class C>
struct PowScalar {
  C exponent;
  KUSARI_HOST_DEVICE C operator()(C v) const { return std::pow(v, exponent); }
};

// Calls visit(f) with the function object of `op` for compute type C (its result is C, bool for
// logical_not); throws DtypeError for an op that C does not have (the transcendental ones on integers).
template <class C, class Visit>
void visit_unary(UnaryOp op, double param, Dtype dtype, Visit&& visit) {
  const C p = static_cast<C>(param);
  switch (op) {
    case UnaryOp::neg:
      return visit(Neg<C>{});
    case UnaryOp::abs:
      return visit(Abs<C>{});
    case UnaryOp::square:
      return visit(Square<C>{});
    case UnaryOp::sign:
      return visit(Sign<C>{});
    case UnaryOp::relu:
      return visit(Relu<C>{});
    case UnaryOp::logical_not:
      return visit(LogicalNot<C>{});
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case UnaryOp::exp:
        return visit(Exp<C>{});
      case UnaryOp::log:
        return visit(Log<C>{});
      case UnaryOp::sqrt:
        return visit(Sqrt<C>{});
      case UnaryOp::reciprocal:
        return visit(Reciprocal<C>{});
      case UnaryOp::sigmoid:
        return visit(Sigmoid<C>{});
      case UnaryOp::tanh:
        return visit(Tanh<C>{});
      case UnaryOp::leaky_relu:
        return visit(LeakyRelu<C>{p});
      case UnaryOp::elu:
        return visit(Elu<C>{p});
      case UnaryOp::pow_scalar:
        return visit(PowScalar<C>{p});
      default:
        break;
    }
  }
  throw DtypeError(cat("unary kernel: operation ", static_cast<int>(op), " is not defined for dtype ", dtype));
}

// x + y.
template <class C>
struct Add {
  KUSARI_HOST_DEVICE C operator()(C x, C y) const { return C(x + y); }
};
// x - y.
template <class C>
struct Sub {
  KUSARI_HOST_DEVICE C operator()(C x, C y) const { return C(x - y); }
};
// x · y.
template <class C>
struct Mul {
  KUSARI_HOST_DEVICE C operator()(C x, C y) const { return C(x * y); }
};
// x / y; for integers truncated, and 0 where y is 0.
template <class C>
struct Div {
  KUSARI_HOST_DEVICE C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      return x / y;
    } else {
      return y == C(0) ? C(0) : C(x / y);
    }
  }
};
// x^y.
template <class C>
struct Pow {
  KUSARI_HOST_DEVICE C operator()(C x, C y) const { return static_cast<C>(std::pow(x, y)); }
};
// The larger; NaN if x is NaN, else y if y is.
template <class C>
struct Maximum {
  KUSARI_HOST_DEVICE C operator()(C x, C y) const { return (x != x || x > y) ? x : y; }
};
// The smaller; NaN if x is NaN, else y if y is.
template <class C>
struct Minimum {
  KUSARI_HOST_DEVICE C operator()(C x, C y) const { return (x != x || x < y) ? x : y; }
};
// g where y > 0, else 0.
template <class C>
struct ReluGrad {
  KUSARI_HOST_DEVICE C operator()(C g, C y) const { return y > C(0) ? g : C(0); }
};
// max(x + y, 0).
template <class C>
struct AddRelu {
  KUSARI_HOST_DEVICE C operator()(C x, C y) const {
    const C s = C(x + y);
    return s <= C(0) ? C(0) : s;
  }
};
// The comparisons, as bool.
template <class C>
struct Equal {
  KUSARI_HOST_DEVICE bool operator()(C x, C y) const { return x == y; }
};
template <class C>
struct NotEqual {
  KUSARI_HOST_DEVICE bool operator()(C x, C y) const { return x != y; }
};
template <class C>
struct Less {
  KUSARI_HOST_DEVICE bool operator()(C x, C y) const { return x < y; }
};
template <class C>
struct LessEqual {
  KUSARI_HOST_DEVICE bool operator()(C x, C y) const { return x <= y; }
};
template <class C>
struct Greater {
  KUSARI_HOST_DEVICE bool operator()(C x, C y) const { return x > y; }
};
template <class C>
struct GreaterEqual {
  KUSARI_HOST_DEVICE bool operator()(C x, C y) const { return x >= y; }
};

// Calls visit(f) with the function object of `op` for compute type C (its result is C, bool for the
// comparisons).
template <class C, class Visit>
void visit_binary(BinaryOp op, Visit&& visit) {
  switch (op) {
    case BinaryOp::add:
      return visit(Add<C>{});
    case BinaryOp::sub:
      return visit(Sub<C>{});
    case BinaryOp::mul:
      return visit(Mul<C>{});
    case BinaryOp::div:
      return visit(Div<C>{});
    case BinaryOp::pow:
      return visit(Pow<C>{});
    case BinaryOp::maximum:
      return visit(Maximum<C>{});
    case BinaryOp::minimum:
      return visit(Minimum<C>{});
    case BinaryOp::relu_grad:
      return visit(ReluGrad<C>{});
    case BinaryOp::add_relu:
      return visit(AddRelu<C>{});
    case BinaryOp::equal:
      return visit(Equal<C>{});
    case BinaryOp::not_equal:
      return visit(NotEqual<C>{});
    case BinaryOp::less:
      return visit(Less<C>{});
    case BinaryOp::less_equal:
      return visit(LessEqual<C>{});
    case BinaryOp::greater:
      return visit(Greater<C>{});
    case BinaryOp::greater_equal:
      return visit(GreaterEqual<C>{});
  }
  throw ValueError(cat("binary kernel: unknown operation ", static_cast<int>(op)));
}

// a · d + b · v, the axpby step.
template <class C>
struct Axpby {
  C a, b;
  KUSARI_HOST_DEVICE C operator()(C d, C v) const { return a * d + b * v; }
};

// The element type a function object writes for operands of element type T: bool for the
// comparisons and logical_not, T otherwise.
template <class T, class F, class... Args>
using result_element_t = std::conditional_t<std::is_same_v<std::invoke_result_t<F, Args...>, bool>, bool, T>;

}  // namespace kusari::kernels::elementwise
