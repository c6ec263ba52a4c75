#pragma once
// Saving and loading small host-side containers (names, numbers, flags) through the Serializer
// visitor, which itself only knows arrays and scalars. A load that finds nothing (a dry run, or a
// missing key under a lenient reader) leaves the container as it was.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>

namespace kusari::training {

// Saves or loads a list of doubles as a 1-d float64 array.
KUSARI_API void serialize_vector(Serializer& serializer, const std::string& key, std::vector<double>& values);
// Saves or loads a list of integers as a 1-d int64 array.
KUSARI_API void serialize_vector(Serializer& serializer, const std::string& key, std::vector<int64_t>& values);
// Saves or loads a list of strings as a 1-d uint8 array (each string followed by a newline, so the
// strings must not contain one).
KUSARI_API void serialize_strings(Serializer& serializer, const std::string& key, std::vector<std::string>& values);
// Saves or loads a flag as an integer scalar (0 or 1).
KUSARI_API void serialize_flag(Serializer& serializer, const std::string& key, bool& value);

}  // namespace kusari::training
