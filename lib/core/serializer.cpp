#include <cmath>

#include <kusari/core/error.h>
#include <kusari/core/serializer.h>

namespace kusari {

namespace {

// The largest count a loaded one may be: every count up to it is exact as a double (triggers compare
// counts as doubles), and counting on from it cannot overflow int64.
constexpr int64_t kLargestCount = int64_t{1} << 53;

}  // namespace

void serialize_count(Serializer& serializer, const std::string& key, int64_t& count, std::string_view owner) {
  int64_t value = count;
  serializer(key, value);
  if (value < 0 || value > kLargestCount) {
    throw ValueError(cat(owner, ": expected a loaded ", key, " in [0, 2^53], got ", value));
  }
  count = value;
}

void serialize_at_least(Serializer& serializer, const std::string& key, double& value, double minimum,
                        std::string_view owner) {
  double loaded = value;
  serializer(key, loaded);
  if (!std::isfinite(loaded) || loaded < minimum) {
    throw ValueError(cat(owner, ": expected a loaded ", key, " that is finite and >= ", minimum, ", got ", loaded));
  }
  value = loaded;
}

}  // namespace kusari
