// The on/off settings read from environment variables.

#include <kusari/core/detail/environment_switch.h>

#include <cstdlib>
#include <string>

#include <kusari/core/error.h>

namespace kusari::detail {

bool environment_switch(const char* name, bool fallback) {
  const char* value = std::getenv(name);
  if (!value || *value == '\0') return fallback;
  const std::string text = value;
  if (text == "0" || text == "1") return text == "1";
  throw ValueError(cat(name, ": expected 0 or 1, got '", text, "'"));
}

}  // namespace kusari::detail
