// The watch over device collectives in flight, with completions the test decides: completed ones are
// forgotten, a late one is warned about once and names itself, the oldest past the timeout ends the
// job, nothing is said before the warning or with the watch off; and the watch's thread doing the same.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <kusari/kernels/cuda/detail/collective_watch.h>

using namespace kusari::kernels::cuda;
using Clock = PendingCollectives::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("pending collectives: completed ones are forgotten, late ones warned about once") {
  PendingCollectives pending;
  const Clock::time_point t0 = Clock::now();
  auto first_done = std::make_shared<bool>(false);
  pending.add("ncclAllReduce of 8 float32 elements on cuda:0", [first_done] { return *first_done; }, t0);
  pending.add("ncclBroadcast of 4 float16 elements on cuda:0", [] { return false; }, t0 + seconds(5));
  const WatchSettings settings{10, 0, "rank 1"};

  PendingCollectives::Verdict early = pending.check(t0 + seconds(9), settings);
  CHECK(early.warnings.empty());
  CHECK_FALSE(early.expired);
  CHECK(pending.pending() == 2);

  PendingCollectives::Verdict late = pending.check(t0 + seconds(11), settings);
  REQUIRE(late.warnings.size() == 1);
  CHECK(late.warnings[0].find("rank 1: ncclAllReduce of 8 float32 elements on cuda:0 has not completed") !=
        std::string::npos);
  CHECK(late.warnings[0].find("after 11.0 s") != std::string::npos);
  CHECK_FALSE(late.expired);  // no timeout set
  CHECK(pending.check(t0 + seconds(12), settings).warnings.empty());  // once each

  *first_done = true;
  PendingCollectives::Verdict later = pending.check(t0 + seconds(16), settings);
  CHECK(pending.pending() == 1);
  REQUIRE(later.warnings.size() == 1);
  CHECK(later.warnings[0].find("ncclBroadcast") != std::string::npos);
}

TEST_CASE("pending collectives: the oldest past the timeout expires") {
  PendingCollectives pending;
  const Clock::time_point t0 = Clock::now();
  pending.add("ncclReduce A", [] { return false; }, t0);
  pending.add("ncclReduce B", [] { return false; }, t0 + seconds(1));
  const WatchSettings settings{2, 3, ""};
  const PendingCollectives::Verdict before = pending.check(t0 + milliseconds(2999), settings);
  CHECK_FALSE(before.expired);
  REQUIRE(before.warnings.size() == 1);  // A is past the warning, B not yet
  CHECK(before.warnings[0].find("ncclReduce A") != std::string::npos);
  const PendingCollectives::Verdict verdict = pending.check(t0 + seconds(5), settings);
  REQUIRE(verdict.expired);
  CHECK(verdict.expired->find("kusari: ncclReduce A has not completed") == 0);
  REQUIRE(verdict.warnings.size() == 1);
  CHECK(verdict.warnings[0].find("ncclReduce B") != std::string::npos);
}

TEST_CASE("pending collectives: a warning of 0 says nothing") {
  PendingCollectives pending;
  const Clock::time_point t0 = Clock::now();
  pending.add("ncclAllGather", [] { return false; }, t0);
  const PendingCollectives::Verdict verdict = pending.check(t0 + seconds(1000), {0, 0, ""});
  CHECK(verdict.warnings.empty());
  CHECK_FALSE(verdict.expired);
}

TEST_CASE("collective watch: its thread warns and ends the job for a collective that never completes") {
  std::mutex mutex;
  std::vector<std::string> warned, ended;
  std::atomic<bool> quick_done{false};
  {
    CollectiveWatch watch(
        {0.05, 0.2, "rank 0"},
        [&](const std::string& line) {
          const std::lock_guard lock(mutex);
          ended.push_back(line);
        },
        [&](const std::string& line) {
          const std::lock_guard lock(mutex);
          warned.push_back(line);
        },
        milliseconds(5));
    REQUIRE(watch.watching());
    watch.add("ncclAllReduce quick", [&] { return quick_done.load(); });
    quick_done = true;
    watch.add("ncclAllReduce stuck", [] { return false; });
    for (int i = 0; i < 2000; ++i) {  // up to 10 s on a loaded machine
      {
        const std::lock_guard lock(mutex);
        if (!ended.empty()) break;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
  }
  REQUIRE(ended.size() == 1);
  CHECK(ended[0].find("rank 0: ncclAllReduce stuck has not completed") != std::string::npos);
  CHECK(ended[0].find("ending the job (KUSARI_STALL_TIMEOUT=0.2)") != std::string::npos);
  for (const std::string& line : warned) CHECK(line.find("quick") == std::string::npos);
}

TEST_CASE("collective watch: off when the warning is 0") {
  CollectiveWatch watch({0, 0, ""}, [](const std::string&) { FAIL("no job to end"); });
  CHECK_FALSE(watch.watching());
  watch.add("ncclAllReduce", [] { return false; });
}
