#pragma once
// Elementwise arithmetic with NumPy broadcasting, and the operators on Variable built on it.

#include <kusari/autograd/variable.h>

namespace kusari::functions {

// a + b.
Variable add(const Variable& a, const Variable& b);
// a - b.
Variable sub(const Variable& a, const Variable& b);
// a * b.
Variable mul(const Variable& a, const Variable& b);
// a / b.
Variable div(const Variable& a, const Variable& b);
// -x.
Variable neg(const Variable& x);
// a ** b elementwise (a > 0 where b is differentiated).
Variable pow(const Variable& a, const Variable& b);
// x ** exponent for a constant exponent.
Variable pow(const Variable& x, double exponent);

}  // namespace kusari::functions

namespace kusari {
Variable operator+(const Variable& a, const Variable& b);
Variable operator-(const Variable& a, const Variable& b);
Variable operator*(const Variable& a, const Variable& b);
Variable operator/(const Variable& a, const Variable& b);
Variable operator-(const Variable& x);
Variable operator+(const Variable& a, double b);
Variable operator+(double a, const Variable& b);
Variable operator-(const Variable& a, double b);
Variable operator-(double a, const Variable& b);
Variable operator*(const Variable& a, double b);
Variable operator*(double a, const Variable& b);
Variable operator/(const Variable& a, double b);
Variable operator/(double a, const Variable& b);
}  // namespace kusari
