#pragma once
// How much memory the machine has free for a data set.

#include <cstdint>
#include <string>

#include <kusari/core/api.h>

namespace kusari::data {

// MemAvailable of /proc/meminfo in bytes (the kernel's estimate of memory available without swapping);
// throws IOError when the file cannot be read or lacks that line.
KUSARI_API int64_t available_memory_bytes();
// `bytes` as a short human reading, e.g. "1.5 GiB".
KUSARI_API std::string format_bytes(int64_t bytes);

}  // namespace kusari::data
