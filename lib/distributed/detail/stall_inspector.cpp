// The stall inspector: a registry of this process's collectives in progress and a thread that reports
// the slow ones to world rank 0, prints rank 0's answer (which ranks have not joined) and ends the job.
// Messages, all int64 over a duplicate of MPI_COMM_WORLD: a report or a done notice carries a
// collective's key (ordinal, call, member count, members); an answer the key, then the missing ranks
// and the reporting ranks, each list led by its length.

#include <kusari/distributed/detail/stall_inspector.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <kusari/core/error.h>
#include <kusari/distributed/mpi_session.h>
#include <kusari/distributed/detail/mpi_exit.h>
#include <kusari/distributed/detail/mpi_util.h>

namespace kusari::distributed {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kReportTag = 1;
constexpr int kAnswerTag = 2;
constexpr int kDoneTag = 3;
constexpr double kReportAfterSeconds = 1.0;  // a collective open this long is reported to rank 0
constexpr auto kPollInterval = std::chrono::milliseconds(200);

thread_local const std::string* thread_label = nullptr;

// A number of seconds >= 0 from the environment variable `name`, or `fallback` when it is unset.
double seconds_from_env(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (*end != '\0' || !(value >= 0)) {
    throw ValueError(cat(name, ": expected a number of seconds >= 0, got '", text, "'"));
  }
  return value;
}

// One collective, alike on every member rank.
struct Key {
  std::vector<int> members;
  int ordinal = 0;
  int64_t call = 0;
  auto operator<=>(const Key&) const = default;
};

// [ordinal, call, member count, members...].
std::vector<int64_t> encode(const Key& key) {
  std::vector<int64_t> out = {key.ordinal, key.call, static_cast<int64_t>(key.members.size())};
  out.insert(out.end(), key.members.begin(), key.members.end());
  return out;
}

// Reads a length-led list of ranks at `at`, advancing it.
std::vector<int> read_ranks(const std::vector<int64_t>& message, size_t& at) {
  const size_t n = static_cast<size_t>(message.at(at++));
  std::vector<int> ranks;
  for (size_t i = 0; i < n; ++i) ranks.push_back(static_cast<int>(message.at(at++)));
  return ranks;
}

// Reads the key at the start of a message; `at` ends after it.
Key decode(const std::vector<int64_t>& message, size_t& at) {
  Key key;
  key.ordinal = static_cast<int>(message.at(0));
  key.call = message.at(1);
  at = 2;
  key.members = read_ranks(message, at);
  return key;
}

// "rank 3" or "ranks 1, 4, 5".
std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

// "ranks 2, 3 on host2, rank 5 on host3": the ranks grouped by the host each runs on, hosts in the order
// their first rank comes.
std::string ranks_on_hosts(const std::vector<int>& ranks, const std::vector<std::string>& host_of_rank) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (int r : ranks) {
    const std::string& host = host_of_rank.at(static_cast<size_t>(r));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == host; });
    if (it == groups.end()) it = groups.insert(groups.end(), {host, {}});
    it->second.push_back(r);
  }
  std::string text;
  for (const auto& [host, members] : groups) text += (text.empty() ? "" : ", ") + rank_list(members) + " on " + host;
  return text;
}

// Every rank's host name (MPI_Get_processor_name), gathered over `comm`.
std::vector<std::string> host_names(MPI_Comm comm) {
  int size = 0, length = 0;
  MPI_Comm_size(comm, &size);
  std::vector<char> mine(MPI_MAX_PROCESSOR_NAME, '\0');
  MPI_Get_processor_name(mine.data(), &length);
  std::vector<char> all(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  check_mpi(MPI_Allgather(mine.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                          comm), "MPI_Allgather");
  std::vector<std::string> names;
  for (int r = 0; r < size; ++r) names.emplace_back(all.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return names;
}

// A collective in progress on this process.
struct OpenCollective {
  Key key;
  std::string what;
  Clock::time_point start;
  bool reported = false;
  bool warned = false;
  std::optional<std::vector<int>> missing;  // rank 0's last answer
  std::vector<int> reporters;
};

class Inspector {
 public:
  static Inspector& instance() {
    static Inspector* inspector = new Inspector;  // never destroyed: its thread ends in MPI_Finalize
    return *inspector;
  }

  void start() {
    {
      std::lock_guard lock(mutex_);
      if (started_) return;
      started_ = true;
    }
    // Every rank duplicates MPI_COMM_WORLD whatever its environment says (and without holding the
    // mutex, which collectives on other threads need meanwhile), so ranks never disagree on it.
    MPI_Comm comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
    std::vector<std::string> hosts = host_names(comm);
    const StallSettings settings = stall_settings_from_environment();
    if (settings.warning_seconds == 0) return;
    if (mpi_thread_level() != ThreadLevel::multiple) {
      std::fprintf(stderr, "kusari: MPI lacks MPI_THREAD_MULTIPLE, so the stall inspector is off\n");
      return;
    }
    std::lock_guard lock(mutex_);
    settings_ = settings;
    comm_ = comm;
    host_of_rank_ = std::move(hosts);
    MPI_Comm_rank(comm_, &rank_);
    // The thread stops before MPI does: at exit before kusari's own MPI_Finalize (atexit handlers run
    // in reverse order, and MPI was initialised before this), and in an MPI_Finalize the program calls
    // itself, which deletes MPI_COMM_SELF's attributes first.
    int keyval = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &stop_at_finalize, &keyval, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
    std::atexit([] { instance().stop(); });
    running_ = true;
    thread_ = std::thread([this] { run(); });
  }

  // Whether the thread runs.
  bool running() const { return running_.load(std::memory_order_relaxed); }

  // Registers a collective; -1 when the inspector is not running.
  int64_t open(Key key, std::string what) {
    std::lock_guard lock(mutex_);
    if (!running_) return -1;
    const int64_t id = next_id_++;
    OpenCollective& c = open_[id];
    c.key = std::move(key);
    c.what = std::move(what);
    c.start = Clock::now();
    return id;
  }

  void close(int64_t id) {
    std::lock_guard lock(mutex_);
    const auto it = open_.find(id);
    if (it == open_.end()) return;
    if (it->second.reported) done_.push_back(it->second.key);
    open_.erase(it);
  }

 private:
  static int stop_at_finalize(MPI_Comm, int, void*, void*) {
    instance().stop();
    return MPI_SUCCESS;
  }

  // Ends the thread and lets go of its unfinished sends (idempotent; not from the thread itself).
  void stop() {
    std::thread thread;
    {
      std::lock_guard lock(mutex_);
      if (!running_) return;
      running_ = false;
      stopping_ = true;
      thread = std::move(thread_);
    }
    wake_.notify_all();
    if (thread.joinable()) thread.join();
    std::lock_guard lock(mutex_);
    for (auto& [request, buffer] : sends_) MPI_Request_free(&request);  // the buffers stay: never destroyed
    open_.clear();
  }

  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      step();
      wake_.wait_for(lock, kPollInterval, [this] { return stopping_; });
    }
  }

  // One pass (mutex held): report, warn and end the job as due, then handle the messages.
  void step() {
    const Clock::time_point now = Clock::now();
    const double report_after = std::min(kReportAfterSeconds, settings_.warning_seconds / 2);
    for (auto& [id, c] : open_) {
      const double age = std::chrono::duration<double>(now - c.start).count();
      if (!c.reported && age >= report_after) {
        send(encode(c.key), 0, kReportTag);
        c.reported = true;
      }
      if (!c.warned && age >= settings_.warning_seconds) {
        c.warned = true;
        const bool lowest_reporter = c.missing && !c.reporters.empty() && c.reporters.front() == rank_;
        if (!c.missing || lowest_reporter) print(c, age);
      }
      if (settings_.timeout_seconds > 0 && age >= settings_.timeout_seconds) {
        end_job_with(cat(describe(c, age), "; ending the job (KUSARI_STALL_TIMEOUT=", settings_.timeout_seconds, ")"));
      }
    }
    for (const Key& key : done_) send(encode(key), 0, kDoneTag);
    done_.clear();
    receive();
    if (rank_ == 0) answer();
    std::erase_if(sends_, [](auto& s) {
      int complete = 0;
      MPI_Test(&s.first, &complete, MPI_STATUS_IGNORE);
      return complete != 0;
    });
  }

  void send(std::vector<int64_t> message, int dest, int tag) {
    auto buffer = std::make_shared<std::vector<int64_t>>(std::move(message));
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_INT64_T, dest, tag, comm_, &request);
    sends_.emplace_back(request, std::move(buffer));
  }

  // Takes every message that has arrived.
  void receive() {
    for (;;) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &status);
      if (!flag) return;
      int count = 0;
      MPI_Get_count(&status, MPI_INT64_T, &count);
      std::vector<int64_t> message(static_cast<size_t>(count));
      MPI_Recv(message.data(), count, MPI_INT64_T, status.MPI_SOURCE, status.MPI_TAG, comm_, MPI_STATUS_IGNORE);
      size_t at = 0;
      const Key key = decode(message, at);
      if (status.MPI_TAG == kReportTag) {
        waiting_[key].insert(status.MPI_SOURCE);
        dirty_.insert(key);
      } else if (status.MPI_TAG == kDoneTag) {
        const auto it = waiting_.find(key);
        if (it != waiting_.end() && (it->second.erase(status.MPI_SOURCE), it->second.empty())) waiting_.erase(it);
      } else {
        for (auto& [id, c] : open_) {
          if (c.key != key) continue;
          c.missing = read_ranks(message, at);
          c.reporters = read_ranks(message, at);
        }
      }
    }
  }

  // Rank 0: tells the reporters of every collective with new reports which ranks are still missing.
  void answer() {
    for (const Key& key : dirty_) {
      const auto it = waiting_.find(key);
      if (it == waiting_.end()) continue;
      std::vector<int64_t> message = encode(key);
      std::vector<int> missing;
      for (int member : key.members) {
        if (!it->second.count(member)) missing.push_back(member);
      }
      message.push_back(static_cast<int64_t>(missing.size()));
      message.insert(message.end(), missing.begin(), missing.end());
      message.push_back(static_cast<int64_t>(it->second.size()));
      message.insert(message.end(), it->second.begin(), it->second.end());
      for (int reporter : it->second) send(message, reporter, kAnswerTag);
    }
    dirty_.clear();
  }

  std::string describe(const OpenCollective& c, double age) const {
    std::string text = cat("kusari stall inspector: rank ", rank_, " has waited ", static_cast<int64_t>(age), " s in ",
                           c.what, " (call ", c.key.call, " on communicator ", c.key.ordinal, " of ",
                           c.key.members.size(), " ranks); ");
    if (!c.missing) return text + "no answer from rank 0, which gathers the reports: it may be the one stalled";
    if (c.missing->empty()) return text + "every rank has joined it";
    return text + "not joined: " + ranks_on_hosts(*c.missing, host_of_rank_);
  }

  void print(const OpenCollective& c, double age) const {
    std::fprintf(stderr, "%s\n", describe(c, age).c_str());
    std::fflush(stderr);
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool started_ = false;
  std::atomic<bool> running_ = false;  // the thread runs and collectives are recorded
  bool stopping_ = false;
  StallSettings settings_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  std::vector<std::string> host_of_rank_;  // every rank's host name
  std::thread thread_;
  std::map<int64_t, OpenCollective> open_;
  std::vector<Key> done_;                     // collectives closed after being reported
  int64_t next_id_ = 0;
  std::map<Key, std::set<int>> waiting_;      // rank 0: the ranks that reported each collective
  std::set<Key> dirty_;                       // rank 0: collectives with reports not yet answered
  std::vector<std::pair<MPI_Request, std::shared_ptr<std::vector<int64_t>>>> sends_;
};

// Communicators made so far per member list, for CollectiveChannel::ordinal.
std::map<std::vector<int>, int>& channel_counts() {
  static std::map<std::vector<int>, int> counts;
  return counts;
}
std::mutex channel_mutex;

}  // namespace

StallSettings stall_settings_from_environment() {
  StallSettings s;
  s.warning_seconds = seconds_from_env("KUSARI_STALL_WARNING", s.warning_seconds);
  s.timeout_seconds = seconds_from_env("KUSARI_STALL_TIMEOUT", s.timeout_seconds);
  if (s.timeout_seconds > 0 && s.warning_seconds > s.timeout_seconds) s.warning_seconds = s.timeout_seconds;
  return s;
}

CollectiveChannel::CollectiveChannel(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int> local(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) local[static_cast<size_t>(i)] = i;
  members.resize(local.size());
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_translate_ranks(group, size, local.data(), world, members.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  std::lock_guard lock(channel_mutex);
  ordinal = channel_counts()[members]++;
}

bool stall_inspector_running() { return Inspector::instance().running(); }

void CollectiveScope::open(const CollectiveChannel& channel, std::string what) {
  if (thread_label) what += " (" + *thread_label + ")";
  id_ = Inspector::instance().open({channel.members, channel.ordinal, call_}, std::move(what));
}

CollectiveScope::~CollectiveScope() {
  if (id_ >= 0) Inspector::instance().close(id_);
}

CollectiveLabel::CollectiveLabel(const std::string& label) : previous_(std::exchange(thread_label, &label)) {}

CollectiveLabel::~CollectiveLabel() { thread_label = previous_; }

void start_stall_inspector() { Inspector::instance().start(); }

}  // namespace kusari::distributed
