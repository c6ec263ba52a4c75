// The profiler (core/profiler.h): its tables from synthetic recordings (busy fractions, time by kernel
// and by attribution, calls, GB/s, names demangled), and its host recording of real work: each
// function's forward and backward attributed to the outermost function, phases taking the time outside
// functions, nothing recorded outside start() and stop().

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include <kusari/core/detail/device_tracer.h>
#include <kusari/core/detail/profile.h>
#include <kusari/core/profiler.h>
#include <kusari/core/timeline.h>
#include <kusari/kusari.h>

using namespace kusari;
using namespace kusari::profiler::detail;

namespace {

// The row named `name` of `rows` (REQUIREd to be there).
const Row& row(const std::vector<Row>& rows, const std::string& name) {
  for (const Row& r : rows) {
    if (r.name == name) return r;
  }
  FAIL("no row named ", name);
  return rows.front();
}

// The calls column of the report's row named `name` (-1 when there is none).
long long calls_in(const std::string& report, const std::string& name) {
  const std::string start = "\n  " + name + " ";
  const size_t at = report.find(start);
  if (at == std::string::npos) return -1;
  return std::stoll(report.substr(at + start.size(), report.find('\n', at + 1) - at - start.size()));
}

void busy_wait(std::chrono::microseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

TEST_CASE("the covered fraction is the union of intervals clipped to the window") {
  CHECK(covered_fraction({}, 0, 100) == 0);
  CHECK(covered_fraction({{10, 20}}, 0, 100) == doctest::Approx(0.1));
  CHECK(covered_fraction({{10, 30}, {20, 40}, {35, 36}}, 0, 100) == doctest::Approx(0.3));  // overlaps once
  CHECK(covered_fraction({{90, 120}, {0, 5}}, 10, 100) == doctest::Approx(10.0 / 90));       // clipped
  CHECK(covered_fraction({{0, 50}}, 50, 50) == 0);                                          // empty window
}

TEST_CASE("a synthetic recording's tables: busy fraction, kernels, attributions, copies' GB/s") {
  Recording r;
  r.names = {"(outside kusari)", "Convolution2D backward", "update"};
  r.device_start_ns = 1'000'000;
  r.device_end_ns = 2'000'000;  // a 1 ms window
  r.host_start_ns = 0;
  r.host_end_ns = 2'000'000;
  // Two launches of one kernel under the convolution's backward, one under the update, a copy of 1 MB
  // in 100 us outside any scope, and a memset on a second device.
  r.device.push_back({ActivityKind::kernel, "_Z11conv_kernelPfi", 1'000'000, 1'200'000, 0, 7, 0, 11});
  r.device.push_back({ActivityKind::kernel, "_Z11conv_kernelPfi", 1'150'000, 1'300'000, 0, 8, 0, 12});
  r.device.push_back({ActivityKind::kernel, "sgd_step", 1'500'000, 1'600'000, 0, 7, 0, 13});
  r.device.push_back({ActivityKind::memcpy, "memcpy HtoD", 1'700'000, 1'800'000, 0, 7, 1'000'000, 14});
  r.device.push_back({ActivityKind::memset, "memset", 1'000'000, 1'050'000, 1, 3, 4096, 15});
  r.attribution_of_launch = {{11, 1}, {12, 1}, {13, 2}};
  r.host.push_back({1, 100'000, 600'000, true});
  r.host.push_back({2, 600'000, 700'000, true});
  r.host.push_back({1, 700'000, 800'000, false});  // the same scope resumed: no new call
  const Summary s = summarize(r);
  CHECK(s.device_window_ms == doctest::Approx(1.0));
  CHECK(s.host_window_ms == doctest::Approx(2.0));
  REQUIRE(s.busy_by_device.size() == 2);
  CHECK(s.busy_by_device[0].first == 0);
  CHECK(s.busy_by_device[0].second == doctest::Approx(0.5));  // [1.0, 1.3] + [1.5, 1.6] + [1.7, 1.8] ms
  CHECK(s.busy_by_device[1].second == doctest::Approx(0.05));
  const Row& kernel = row(s.device_by_kernel, "_Z11conv_kernelPfi");
  CHECK(kernel.calls == 2);
  CHECK(kernel.total_ms == doctest::Approx(0.35));
  CHECK(kernel.share == doctest::Approx(0.35));
  CHECK(s.device_by_kernel.front().name == "_Z11conv_kernelPfi");  // largest first
  CHECK(row(s.device_by_kernel, "memcpy HtoD").bytes == 1'000'000);
  CHECK(row(s.device_by_function, "Convolution2D backward").total_ms == doctest::Approx(0.35));
  CHECK(row(s.device_by_function, "update").calls == 1);
  CHECK(row(s.device_by_function, "(outside kusari)").calls == 2);  // the copy and the memset
  CHECK(row(s.host_by_function, "Convolution2D backward").calls == 1);
  CHECK(row(s.host_by_function, "Convolution2D backward").total_ms == doctest::Approx(0.6));
  CHECK(row(s.host_by_function, "update").share == doctest::Approx(0.05));
  const std::string text = format(s, 10);
  CHECK(text.find("cuda:0 busy 50.0%") != std::string::npos);
  CHECK(text.find("conv_kernel(float*, int)") != std::string::npos);  // demangled
  CHECK(text.find("10.0") != std::string::npos);                       // the copy's GB/s: 1 MB in 100 us
  CHECK(text.find("GPU time by kusari function") != std::string::npos);
}

TEST_CASE("kernel names are demangled and shortened in the middle") {
  CHECK(display_name("_Z3addPfS_i", 80) == "add(float*, float*, int)");
  CHECK(display_name("plain_name", 80) == "plain_name");
  const std::string shortened = display_name(std::string(100, 'a') + "tail", 20);
  CHECK(shortened.size() == 20);
  CHECK(shortened.find("...") != std::string::npos);
  CHECK(shortened.substr(shortened.size() - 3) == "ail");
}

TEST_CASE("the host recording attributes each function's time to the outermost function, phases the rest") {
  const Variable x(Array::normal({64, 32}, 0, 1, 1), true);
  const Variable w(Array::normal({16, 32}, 0, 1, 2), true);
  // Before start(): nothing recorded.
  F::sum(F::linear(x, w)).backward();
  profiler::start();
  CHECK(profiler::active());
  {
    const timeline::Span forward("forward");
    busy_wait(std::chrono::microseconds(2000));  // time in the phase, outside functions
    Variable loss = F::sum(F::relu(F::linear(x, w)));
    const timeline::Span inner("backward");
    loss.backward();  // Linear's backward runs Linear and MatMul forwards: its own time
  }
  profiler::stop();
  CHECK_FALSE(profiler::active());
  F::sum(F::linear(x, w)).backward();  // after stop(): nothing recorded
  const std::string text = profiler::report();
  INFO(text);
  CHECK(text.find("host time by kusari function") != std::string::npos);
  CHECK(text.find("GPU time") == std::string::npos);  // the CPU backend traces no device
  // One call each: Linear's backward once, the forwards it runs inside not separately.
  CHECK(calls_in(text, "Linear forward") == 1);
  CHECK(calls_in(text, "ReLU forward") == 1);
  CHECK(calls_in(text, "Linear backward") == 1);
  CHECK(calls_in(text, "MatMul forward") == -1);
  CHECK(calls_in(text, "forward") == 1);  // the phase's own time (the busy wait)
  CHECK(calls_in(text, "backward") == 1);
}

TEST_CASE("a function scope's calls and time, and a phase's time around it, add up to the window") {
  profiler::start();
  {
    const profiler::Scope phase(profiler::ScopeKind::phase, "update");
    busy_wait(std::chrono::microseconds(3000));
    for (int i = 0; i < 3; ++i) {
      const profiler::Scope function(profiler::ScopeKind::function, "Step forward");
      const profiler::Scope nested(profiler::ScopeKind::function, "Inner forward");  // nested: no row
      const profiler::Scope nested_phase(profiler::ScopeKind::phase, "bucket 1 pack");  // also the outer's
      busy_wait(std::chrono::microseconds(1000));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // outside every scope
  profiler::stop();
  const std::string text = profiler::report();
  INFO(text);
  CHECK(calls_in(text, "Step forward") == 3);
  CHECK(calls_in(text, "update") == 1);
  CHECK(calls_in(text, "Inner forward") == -1);
  CHECK(calls_in(text, "bucket 1 pack") == -1);
}

namespace {

// A device tracer that records the attributions pushed and reports one kernel launched under each.
class FakeTracer final : public DeviceTracer {
 public:
  uint64_t start() override { return 1'000; }
  uint64_t stop(Recording& into) override {
    for (size_t i = 0; i < launched.size(); ++i) {
      const auto correlation = static_cast<uint32_t>(i + 1);
      into.device.push_back({ActivityKind::kernel, "_Z6kernelv", 1'000 + 100 * i, 1'050 + 100 * i, 0, 7, 0,
                             correlation});
      into.attribution_of_launch[correlation] = launched[i];
    }
    return 1'000 + 100 * launched.size();
  }
  void push(uint64_t attribution) override {
    stack.push_back(attribution);
    launched.push_back(attribution);  // as if the scope launched one kernel
  }
  void pop() override {
    REQUIRE_FALSE(stack.empty());
    stack.pop_back();
  }
  int64_t clock_offset_ns() override { return 0; }
  std::vector<uint64_t> stack, launched;
};

}  // namespace

TEST_CASE("a device tracer receives each attribution while it records, and its kernels join the report") {
  FakeTracer tracer;
  set_device_tracer(&tracer);
  {
    const profiler::Scope before(profiler::ScopeKind::phase, "before");  // not recording: nothing pushed
    profiler::start();
    {
      const profiler::Scope phase(profiler::ScopeKind::phase, "update");
      CHECK(tracer.stack.size() == 1);
      const profiler::Scope function(profiler::ScopeKind::function, "Step forward");
      const profiler::Scope nested(profiler::ScopeKind::function, "Inner forward");  // keeps Step's attribution
      CHECK(tracer.stack.size() == 2);
    }
    CHECK(tracer.stack.empty());
    profiler::stop();
  }
  CHECK(tracer.stack.empty());  // "before" popped nothing it had not pushed
  set_device_tracer(nullptr);
  const std::string text = profiler::report();
  INFO(text);
  CHECK(text.find("cuda:0 busy 50.0%") != std::string::npos);  // two 50 ns kernels in a 200 ns window
  CHECK(text.find("GPU time by kusari function") != std::string::npos);
  const size_t gpu = text.find("GPU time by kusari function");
  CHECK(calls_in(text.substr(gpu), "Step forward") == 1);
  CHECK(calls_in(text.substr(gpu), "update") == 1);
  CHECK(text.find("kernel()") != std::string::npos);
}

TEST_CASE("ProfileReport refuses a window it cannot profile, naming both values") {
  CHECK_THROWS_WITH_AS(training::ProfileReport(-1, 5),
                       "ProfileReport: expected warmup >= 0 and iterations >= 1, got warmup -1 and iterations 5",
                       ValueError);
  CHECK_THROWS_WITH_AS(training::ProfileReport(3, 0),
                       "ProfileReport: expected warmup >= 0 and iterations >= 1, got warmup 3 and iterations 0",
                       ValueError);
}
