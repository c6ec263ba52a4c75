#pragma once
// What the fuzz targets share: the input as a file for the readers that take a path, and the rule
// that a kusari::Error is the expected answer to bad bytes while anything else (a crash, another
// exception, a leak, a huge allocation) is a finding.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <kusari/core/error.h>

namespace kusari::fuzz {

// The path of this process's file or directory `name`: "kusari_fuzz_<name>" in a directory of its own
// under TMPDIR or /tmp, made on the first call, which becomes the working directory (removed with all it
// holds at exit).
// The path is relative and the same in every process, so that no comparison the coverage traces sees
// depends on the process id: runs under one -seed make the same inputs (scripts/fuzz.sh --replay). Corpus
// and artifact paths given to a target must therefore be absolute.
inline std::string process_path(const std::string& name) {
  static const bool moved = [] {
    const char* tmp = std::getenv("TMPDIR");
    static std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/kusari_fuzz_XXXXXX";
    if (!::mkdtemp(dir.data()) || ::chdir(dir.c_str()) != 0) std::abort();
    std::atexit([] {
      if (::chdir("/") == 0) std::filesystem::remove_all(dir);
    });
    return true;
  }();
  (void)moved;
  return "kusari_fuzz_" + name;
}

// `size` bytes at `data` written to this process's file `name` (process_path), overwritten on every
// call and removed when the process exits; returns its path.
inline std::string input_file(const uint8_t* data, size_t size, const std::string& name) {
  const std::string path = process_path(name);
  static std::string last_path;  // the one name each target uses
  if (last_path.empty()) std::atexit([] { std::remove(last_path.c_str()); });
  last_path = path;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
  std::fclose(file);
  return path;
}

// The bytes as a vector.
inline std::vector<uint8_t> input_bytes(const uint8_t* data, size_t size) { return {data, data + size}; }

// Runs `parse`; a kusari::Error (bad input, refused with a message) is fine, anything else escapes.
// With KUSARI_FUZZ_VERBOSE set, says on stderr how each input ended (to triage a corpus).
inline void expect_kusari_error_or_success(const std::function<void()>& parse) {
  static const bool verbose = std::getenv("KUSARI_FUZZ_VERBOSE") != nullptr;
  try {
    parse();
    if (verbose) std::fprintf(stderr, "accepted\n");
  } catch (const Error& error) {
    if (verbose) std::fprintf(stderr, "refused: %s\n", error.what());
  }
}

}  // namespace kusari::fuzz
