#pragma once
// The per-thread TurboJPEG decompressor shared by the JPEG decoders (a tjhandle, as void*), and the
// header read and decode size they share.

#include <cstdint>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/jpeg.h>

namespace kusari::data {

// The calling thread's TurboJPEG decompressor, created on first use (handles are not thread-safe,
// and cheap to keep); throws IOError when TurboJPEG cannot start.
KUSARI_API void* turbojpeg_decompressor();
// True when the last TurboJPEG call on `handle` failed in a way that leaves the image wrong: a fatal
// error or truncated data (recoverable warnings such as extraneous bytes are not failures).
KUSARI_API bool turbojpeg_failed(void* handle);
// Throws IOError "<what> (<TurboJPEG's message>)" after replacing the calling thread's decompressor:
// TurboJPEG 2.1 leaves a handle whose header read failed unable to read any later image ("two SOI
// markers"), so one corrupt file would otherwise break every later file decoded on that thread.
[[noreturn]] KUSARI_API void throw_turbojpeg_error(void* handle, const std::string& what);

// What TurboJPEG reads from a JPEG's headers.
struct KUSARI_API TurboJpegHeader {
  int height = 0;       // rows of the full-size image
  int width = 0;        // columns
  int subsampling = 0;  // chroma subsampling, a TJSAMP_* (negative when TurboJPEG knows none)
  int colorspace = 0;   // a TJCS_*
};
// The headers of `bytes` read with `handle`; throws IOError "<name>: not a readable JPEG (...)".
KUSARI_API TurboJpegHeader read_turbojpeg_header(void* handle, const std::vector<uint8_t>& bytes, const std::string& name);

// The scale and size a JPEG is decoded at.
struct KUSARI_API JpegDecodeSize {
  JpegScale scale;     // choose_jpeg_scale's factor, 1/1 for a full-size decode
  int64_t height = 0;  // rows at that scale
  int64_t width = 0;   // columns
};
// Checks the header's size (check_image_dimensions, naming `name`) and picks the scale of
// choose_jpeg_scale for at least min_height x min_width pixels (0 x 0: full size).
KUSARI_API JpegDecodeSize choose_decode_size(const TurboJpegHeader& header, int64_t min_height, int64_t min_width,
                                             const std::string& name);

}  // namespace kusari::data
