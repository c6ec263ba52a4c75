#include <kusari/version.h>

#include <kusari/core/error.h>

namespace kusari {

std::string version() { return cat(KUSARI_VERSION_MAJOR, ".", KUSARI_VERSION_MINOR, ".", KUSARI_VERSION_PATCH); }

}  // namespace kusari
