#pragma once
// Elementwise arithmetic with NumPy broadcasting, and the operators on Variable built on it.

#include <kusari/core/api.h>
#include <kusari/autograd/variable.h>

namespace kusari::functions {

// a + b.
KUSARI_API Variable add(const Variable& a, const Variable& b);
// a - b.
KUSARI_API Variable sub(const Variable& a, const Variable& b);
// a * b.
KUSARI_API Variable mul(const Variable& a, const Variable& b);
// a / b.
KUSARI_API Variable div(const Variable& a, const Variable& b);
// -x.
KUSARI_API Variable neg(const Variable& x);
// a ** b elementwise (a > 0 where b is differentiated).
KUSARI_API Variable pow(const Variable& a, const Variable& b);
// x ** exponent for a constant exponent.
KUSARI_API Variable pow(const Variable& x, double exponent);

}  // namespace kusari::functions

namespace kusari {
KUSARI_API Variable operator+(const Variable& a, const Variable& b);
KUSARI_API Variable operator-(const Variable& a, const Variable& b);
KUSARI_API Variable operator*(const Variable& a, const Variable& b);
KUSARI_API Variable operator/(const Variable& a, const Variable& b);
KUSARI_API Variable operator-(const Variable& x);
KUSARI_API Variable operator+(const Variable& a, double b);
KUSARI_API Variable operator+(double a, const Variable& b);
KUSARI_API Variable operator-(const Variable& a, double b);
KUSARI_API Variable operator-(double a, const Variable& b);
KUSARI_API Variable operator*(const Variable& a, double b);
KUSARI_API Variable operator*(double a, const Variable& b);
KUSARI_API Variable operator/(const Variable& a, double b);
KUSARI_API Variable operator/(double a, const Variable& b);
}  // namespace kusari
