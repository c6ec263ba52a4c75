#pragma once
// Parameter initializers: each returns an Initializer that fills an array in place. A seed makes the
// values reproducible; without one the process default generator (kusari::manual_seed) is used.

#include <cstdint>
#include <optional>
#include <string>

#include <kusari/core/api.h>
#include <kusari/links/link.h>

namespace kusari::links::initializers {

// Which fan a scaled initializer divides by.
enum class Fan { in, out, average };

// (fan_in, fan_out) of a parameter shape: (shape[1], shape[0]) times the receptive field size.
KUSARI_API std::pair<int64_t, int64_t> fans(const Shape& shape);

// N(0, scale^2).
KUSARI_API Initializer Normal(double scale = 0.05, std::optional<uint64_t> seed = {});
// U(-scale, scale).
KUSARI_API Initializer Uniform(double scale = 0.05, std::optional<uint64_t> seed = {});
// N(0, scale^2 * 2 / fan) (He et al. 2015).
KUSARI_API Initializer HeNormal(double scale = 1.0, Fan fan = Fan::in, std::optional<uint64_t> seed = {});
// N(0, scale^2 / fan_in) (LeCun 1998).
KUSARI_API Initializer LeCunNormal(double scale = 1.0, std::optional<uint64_t> seed = {});
// U(-s, s) with s = scale * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio 2010).
KUSARI_API Initializer GlorotUniform(double scale = 1.0, std::optional<uint64_t> seed = {});
// Every element = value.
KUSARI_API Initializer Constant(double value);
// Every element = 0.
KUSARI_API Initializer Zero();
// Every element = 1.
KUSARI_API Initializer One();

}  // namespace kusari::links::initializers
