// kusari/version.h: the macros, the library's version() and meson's project version are one version.

#include <kusari/kusari.h>

#include <doctest/doctest.h>

TEST_CASE("the headers, the library and the build agree on the version") {
  const std::string headers = std::to_string(KUSARI_VERSION_MAJOR) + "." + std::to_string(KUSARI_VERSION_MINOR) +
                              "." + std::to_string(KUSARI_VERSION_PATCH);
  CHECK(headers == KUSARI_PROJECT_VERSION);
  CHECK(kusari::version() == headers);
}
