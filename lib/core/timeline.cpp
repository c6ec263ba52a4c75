// Timeline events in memory, written as one JSON array per process at each flush and at exit.

#include <kusari/core/timeline.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include <kusari/core/json_text.h>

namespace kusari::timeline {
namespace {

using Clock = std::chrono::steady_clock;

// One complete event ("ph": "X"): microseconds since the process's first span.
struct Event {
  std::string name;
  int64_t start_us;
  int64_t duration_us;
  int thread;
};

// The process's events and where they go.
struct Recorder {
  std::mutex mutex;
  std::vector<Event> events;
  int rank = 0;
  Clock::time_point origin = Clock::now();
  std::atomic<int> next_thread{0};
  std::map<std::string, int> lanes;  // device lanes by name, numbered from kFirstLane

  static Recorder& instance() {
    static Recorder* recorder = [] {
      auto* r = new Recorder;  // never destroyed: spans may end during static destruction
      std::atexit([] { flush(); });
      return r;
    }();
    return *recorder;
  }
};

// The thread id of the first device lane (host threads take small ids from 0).
constexpr int kFirstLane = 1000;

// A small id per thread, in the order threads first record.
int thread_id() {
  thread_local const int id = Recorder::instance().next_thread++;
  return id;
}

// PATH.rank<R>.json for KUSARI_TIMELINE=PATH (or PATH.json).
std::string file_name(int rank) {
  std::string path = std::getenv("KUSARI_TIMELINE");
  const std::string json = ".json";
  if (path.size() > json.size() && path.compare(path.size() - json.size(), json.size(), json) == 0) {
    path.resize(path.size() - json.size());
  }
  return path + ".rank" + std::to_string(rank) + json;
}

}  // namespace

bool enabled() {
  static const bool on = [] {
    const char* path = std::getenv("KUSARI_TIMELINE");
    return path && *path;
  }();
  return on;
}

void set_rank(int rank) {
  if (!enabled()) return;
  Recorder& r = Recorder::instance();
  std::lock_guard lock(r.mutex);
  r.rank = rank;
}

void flush() {
  if (!enabled()) return;
  Recorder& r = Recorder::instance();
  std::lock_guard lock(r.mutex);
  const std::string name = file_name(r.rank);
  const std::string temporary = name + ".tmp";
  std::FILE* file = std::fopen(temporary.c_str(), "w");
  if (!file) {
    std::fprintf(stderr, "kusari: KUSARI_TIMELINE: cannot write %s\n", temporary.c_str());
    return;
  }
  std::fprintf(file, "[\n");
  std::fprintf(file, R"({"name": "process_name", "ph": "M", "pid": %d, "args": {"name": "rank %d"}})", r.rank, r.rank);
  for (const auto& [lane, id] : r.lanes) {
    std::fprintf(file, ",\n" R"({"name": "thread_name", "ph": "M", "pid": %d, "tid": %d, "args": {"name": %s}})",
                 r.rank, id, json_string(lane).c_str());
  }
  for (const Event& e : r.events) {
    std::fprintf(file, ",\n" R"({"name": %s, "cat": "kusari", "ph": "X", "ts": %lld, "dur": %lld, "pid": %d, "tid": %d})",
                 json_string(e.name).c_str(), static_cast<long long>(e.start_us), static_cast<long long>(e.duration_us),
                 r.rank, e.thread);
  }
  std::fprintf(file, "\n]\n");
  const bool written = std::fclose(file) == 0;
  if (!written || std::rename(temporary.c_str(), name.c_str()) != 0) {
    std::fprintf(stderr, "kusari: KUSARI_TIMELINE: cannot write %s\n", name.c_str());
  }
}

void add_device_event(std::string name, Clock::time_point start, std::chrono::nanoseconds duration,
                      const std::string& lane) {
  if (!enabled()) return;
  Recorder& r = Recorder::instance();
  std::lock_guard lock(r.mutex);
  const int id = r.lanes.emplace(lane, kFirstLane + static_cast<int>(r.lanes.size())).first->second;
  const int64_t start_us = std::chrono::duration_cast<std::chrono::microseconds>(start - r.origin).count();
  const int64_t duration_us = std::chrono::duration_cast<std::chrono::microseconds>(duration).count();
  r.events.push_back({std::move(name), start_us, std::max<int64_t>(duration_us, 1), id});
}

void Span::begin(std::string name) {
  Recorder::instance();  // the origin precedes every span
  name_ = std::move(name);
  start_ = Clock::now();
  active_ = true;
}

Span::~Span() {
  if (!active_) return;
  const Clock::time_point end = Clock::now();
  Recorder& r = Recorder::instance();
  const auto us = [&](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t - r.origin).count();
  };
  const int thread = thread_id();
  std::lock_guard lock(r.mutex);
  r.events.push_back({std::move(name_), us(start_), us(end) - us(start_), thread});
}

}  // namespace kusari::timeline
