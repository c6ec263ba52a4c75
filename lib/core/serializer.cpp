#include <cmath>

#include <kusari/core/error.h>
#include <kusari/core/serializer.h>

namespace kusari {

void serialize_count(Serializer& serializer, const std::string& key, int64_t& count, std::string_view owner) {
  int64_t value = count;
  serializer(key, value);
  if (value < 0) throw ValueError(cat(owner, ": expected a loaded ", key, " >= 0, got ", value));
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
