#pragma once
// The per-thread TurboJPEG decompressor shared by the JPEG decoders (a tjhandle, as void*).

#include <string>

namespace kusari::data {

// The calling thread's TurboJPEG decompressor, created on first use (handles are not thread-safe,
// and cheap to keep); throws IOError when TurboJPEG cannot start.
void* turbojpeg_decompressor();
// True when the last TurboJPEG call on `handle` failed in a way that leaves the image wrong: a fatal
// error or truncated data (recoverable warnings such as extraneous bytes are not failures).
bool turbojpeg_failed(void* handle);
// Throws IOError "<what> (<TurboJPEG's message>)" after replacing the calling thread's decompressor:
// TurboJPEG 2.1 leaves a handle whose header read failed unable to read any later image ("two SOI
// markers"), so one corrupt file would otherwise break every later file decoded on that thread.
[[noreturn]] void throw_turbojpeg_error(void* handle, const std::string& what);

}  // namespace kusari::data
