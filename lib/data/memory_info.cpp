#include <kusari/data/memory_info.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <kusari/core/error.h>

namespace kusari::data {

int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  if (!in) throw IOError("/proc/meminfo: cannot open it to read MemAvailable");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, unit;
    int64_t value = 0;
    if (fields >> key >> value >> unit && key == "MemAvailable:" && unit == "kB") return value * 1024;
  }
  throw IOError("/proc/meminfo: expected a line \"MemAvailable: N kB\", found none");
}

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace kusari::data
