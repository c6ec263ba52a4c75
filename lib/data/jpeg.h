#pragma once
// JPEG decoding through TurboJPEG.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/data/image.h>

namespace kusari::data {

// Decodes JPEG bytes to RGB (grayscale is expanded); throws IOError naming `name` when the data is not
// a JPEG TurboJPEG can decode or ends early. Recoverable libjpeg warnings (extraneous bytes) are ignored.
Image decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& name);
// Reads and decodes a JPEG file.
Image read_jpeg(const std::string& path);

}  // namespace kusari::data
