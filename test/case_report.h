#pragma once
// Every doctest case's outcome on a line of its own, "kusari-case: passed|failed|skipped PROGRAM: NAME",
// for scripts/summarize_tests.py, which counts distinct cases from them: doctest's own summary counts a
// case that skipped itself as passed, and cases its filters left out as skipped.

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

namespace kusari::testing {

// Why the running case skipped itself; empty while it has not.
inline std::string& skip_reason() {
  static std::string reason;
  return reason;
}

// Marks the running case skipped because of the machine it runs on (no python3 with NumPy, running as
// root): it says why, and the caller returns from the case. Assertions that failed before still fail it.
inline void skip_case(const std::string& why) {
  skip_reason() = why;
  MESSAGE("skipped: ", why);
}

// The program's name on the case lines (argv[0] without its directory); the main function sets it.
inline std::string& case_program() {
  static std::string name = "test";
  return name;
}

// A doctest listener printing one "kusari-case:" line per case that ran or was skipped by a decorator.
class CaseReport : public doctest::IReporter {
 public:
  explicit CaseReport(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override {
    name_ = data.m_name;
    skip_reason().clear();
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    print(!stats.testCaseSuccess ? "failed" : skip_reason().empty() ? "passed" : "skipped", name_);
  }
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  // Called for cases a filter left out too; only those with doctest::skip() were meant to run here.
  void test_case_skipped(const doctest::TestCaseData& data) override {
    if (data.m_skip) print("skipped", data.m_name);
  }

 private:
  static void print(const char* outcome, const std::string& name) {
    std::printf("kusari-case: %s %s: %s\n", outcome, case_program().c_str(), name.c_str());
    std::fflush(stdout);
  }
  std::string name_;
};

// Sets the program's name for the case lines from argv[0].
inline void set_case_program(const char* argv0) {
  const std::string path = argv0 ? argv0 : "test";
  case_program() = path.substr(path.find_last_of('/') + 1);
}

}  // namespace kusari::testing
