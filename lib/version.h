#pragma once
// kusari's version: the headers' at compile time, the library's at run time.

#include <string>

#include <kusari/core/api.h>

// The version of these headers; meson.build's project version is the same (test_version checks).
#define KUSARI_VERSION_MAJOR 0
#define KUSARI_VERSION_MINOR 1
#define KUSARI_VERSION_PATCH 0

namespace kusari {

// The version of the linked library as "major.minor.patch" (equal to the headers' unless a program
// runs against another build of libkusari than it was compiled with).
KUSARI_API std::string version();

}  // namespace kusari
