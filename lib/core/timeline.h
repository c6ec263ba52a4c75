#pragma once
// The timeline (Horovod's HOROVOD_TIMELINE, for kusari): with KUSARI_TIMELINE=PATH every process writes
// the spans of its work — forward, backward, each gradient bucket's pack, all-reduce and install, the
// update, waits for data, evaluation — as Chrome trace events to PATH.rank<R>.json (PATH's ".json", if
// any, moved to the end), which chrome://tracing and Perfetto open. Without the variable a span records
// nothing (its name is still built by the caller).

#include <chrono>
#include <string>

namespace kusari::timeline {

// Whether KUSARI_TIMELINE is set (read once).
bool enabled();
// The rank the process's events and file name carry (0 until set; the first communicator sets it).
void set_rank(int rank);
// Writes the events recorded so far and closes the JSON array; the file stays valid after every call
// (it runs at exit too, and later events reopen the array).
void flush();

// Work on this thread from construction to destruction, named `name` ("backward", "bucket 2 allreduce").
class Span {
 public:
  explicit Span(const char* name) : Span(std::string(name)) {}
  explicit Span(std::string name);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  bool active_ = false;
};

}  // namespace kusari::timeline
