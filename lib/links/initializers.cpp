#include <kusari/links/initializers.h>

#include <cmath>

#include <kusari/core/random.h>
#include <kusari/kernels/layer_routines.h>

namespace kusari::links::initializers {
namespace {

// Draws into `a` from the given seed, or from the default generator's next counters.
void draw(Distribution distribution, double p0, double p1, std::optional<uint64_t> seed, const Array& a) {
  Generator& generator = default_generator();
  const uint64_t stream = seed.value_or(generator.seed());
  const uint64_t offset = seed ? 0 : generator.advance(static_cast<uint64_t>(a.size()));
  ops::fill_random(a, distribution, stream, offset, p0, p1);
}

double fan_of(const Shape& shape, Fan fan) {
  const auto [in, out] = fans(shape);
  const double value = fan == Fan::in ? static_cast<double>(in)
                       : fan == Fan::out ? static_cast<double>(out)
                                         : (static_cast<double>(in) + static_cast<double>(out)) / 2;
  if (value <= 0) throw ShapeError(cat("initializer: cannot compute the fan of shape ", shape));
  return value;
}

}  // namespace

std::pair<int64_t, int64_t> fans(const Shape& shape) {
  if (shape.ndim() < 2) {
    throw ShapeError(cat("initializer: expected a parameter with at least 2 axes to compute fans, got ", shape));
  }
  int64_t receptive = 1;
  for (int64_t i = 2; i < shape.ndim(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

Initializer Normal(double scale, std::optional<uint64_t> seed) {
  return [=](const Array& a) { draw(Distribution::normal, 0.0, scale, seed, a); };
}

Initializer Uniform(double scale, std::optional<uint64_t> seed) {
  return [=](const Array& a) { draw(Distribution::uniform, -scale, scale, seed, a); };
}

Initializer HeNormal(double scale, Fan fan, std::optional<uint64_t> seed) {
  return [=](const Array& a) {
    draw(Distribution::normal, 0.0, scale * std::sqrt(2.0 / fan_of(a.shape(), fan)), seed, a);
  };
}

Initializer LeCunNormal(double scale, std::optional<uint64_t> seed) {
  return [=](const Array& a) {
    draw(Distribution::normal, 0.0, scale * std::sqrt(1.0 / fan_of(a.shape(), Fan::in)), seed, a);
  };
}

Initializer GlorotUniform(double scale, std::optional<uint64_t> seed) {
  return [=](const Array& a) {
    const double s = scale * std::sqrt(3.0 / fan_of(a.shape(), Fan::average));  // sqrt(6 / (in + out))
    draw(Distribution::uniform, -s, s, seed, a);
  };
}

Initializer Constant(double value) {
  return [value](const Array& a) { a.fill(value); };
}

Initializer Zero() { return Constant(0.0); }

Initializer One() { return Constant(1.0); }

}  // namespace kusari::links::initializers
