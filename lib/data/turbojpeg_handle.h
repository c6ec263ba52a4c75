#pragma once
// The per-thread TurboJPEG decompressor shared by the JPEG decoders (a tjhandle, as void*).

namespace kusari::data {

// The calling thread's TurboJPEG decompressor, created on first use (handles are not thread-safe,
// and cheap to keep); throws IOError when TurboJPEG cannot start.
void* turbojpeg_decompressor();
// True when the last TurboJPEG call on `handle` failed in a way that leaves the image wrong: a fatal
// error or truncated data (recoverable warnings such as extraneous bytes are not failures).
bool turbojpeg_failed(void* handle);

}  // namespace kusari::data
