#include <kusari/core/config.h>

namespace kusari {

Config& config() {
  thread_local Config current;
  return current;
}

}  // namespace kusari
