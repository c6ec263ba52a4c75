#include "training_fixtures.h"

#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>

using namespace kusari;
using namespace kusari::testing;
namespace fs = std::filesystem;

namespace {

// Runs python3 (plain json, no NumPy needed) on `script` with the argument `path`; false with a message
// when there is no python3.
bool run_python_json_check(const TempDir& dir, const std::string& script, const std::string& path) {
  if (std::system("python3 -c \"import json\" >/dev/null 2>&1") != 0) {
    skip_case("python3 is not available for the Python check");
    return false;
  }
  const std::string script_path = dir / "check.py";
  std::ofstream(script_path) << script;
  CHECK(std::system(cat("python3 ", script_path, " ", path).c_str()) == 0);
  return true;
}

// Every iteration, reports the value of a function of the iteration.
std::shared_ptr<T::Extension> reporter_of(std::function<double(int64_t)> value, const std::string& key) {
  return T::make_extension([value, key](T::Trainer& t) { T::report({{key, value(t.updater().iteration())}}); },
                           "reporter_" + key, {1, "iteration"}, T::kPriorityWriter);
}

}  // namespace

TEST_CASE("LogReport writes a JSON list of per-interval means with epoch, iteration and elapsed_time") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {6, "iteration"});
  s.trainer->extend(reporter_of([](int64_t it) { return static_cast<double>(it); }, "value"));
  s.trainer->extend(std::make_shared<T::LogReport>(T::LogReportOptions{.trigger = {2, "iteration"}}));
  s.trainer->run();
  const auto& log = s.trainer->get_extension<T::LogReport>("LogReport").log();
  REQUIRE(log.size() == 3);
  CHECK(log[0].at("value") == 1.5);
  CHECK(log[2].at("value") == 5.5);
  CHECK(log[1].at("iteration") == 4);
  CHECK(log[2].at("epoch") == 2);
  CHECK(log[2].at("elapsed_time") > 0);
  CHECK(log[0].contains("main/loss"));
  CHECK(log[0].at("data_time") >= 0);  // the updater's wait for its batch
  const std::string text = read_text(dir / "out/log");
  CHECK(text.rfind("[\n    {\n        \"data_time\": ", 0) == 0);
  CHECK(text.find("\"value\": 5.5\n    }\n]\n") != std::string::npos);
  CHECK(dir.list() == std::vector<std::string>{"out"});
  CHECK(fs::directory_iterator(dir / "out") != fs::directory_iterator());
  for (const auto& entry : fs::directory_iterator(dir / "out")) CHECK(entry.path().filename() == "log");
  run_python_json_check(dir, R"(
import json, sys
log = json.load(open(sys.argv[1]))
assert isinstance(log, list) and len(log) == 3, log
assert [e["iteration"] for e in log] == [2, 4, 6], log
assert [e["epoch"] for e in log] == [0, 1, 2], log
assert [e["value"] for e in log] == [1.5, 3.5, 5.5], log
assert all(e["elapsed_time"] > 0 and e["main/loss"] > 0 for e in log), log
)", dir / "out/log");
}

TEST_CASE("LogReport's postprocess derives values from each entry's means before it is kept and written") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {4, "iteration"});
  s.trainer->extend(reporter_of([](int64_t it) { return static_cast<double>(it); }, "seconds"));
  s.trainer->extend(std::make_shared<T::LogReport>(T::LogReportOptions{
      .trigger = {2, "iteration"},
      .postprocess = [](T::Observation& entry) { entry["per_second"] = 3 / entry.at("seconds"); }}));
  s.trainer->run();
  const auto& log = s.trainer->get_extension<T::LogReport>("LogReport").log();
  REQUIRE(log.size() == 2);
  // 3 over the mean time of iterations 1 and 2 (1.5 s), not the mean of 3/1 and 3/2.
  CHECK(log[0].at("per_second") == 2.0);
  CHECK(log[1].at("per_second") == doctest::Approx(3 / 3.5));
  CHECK(read_text(dir / "out/log").find("\"per_second\": 2,") != std::string::npos);
}

TEST_CASE("LogReport keeps only the chosen keys and writes NaN and infinities as Python does") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {2, "iteration"});
  s.trainer->extend(reporter_of([](int64_t it) { return it == 1 ? NAN : 1.0; }, "nan"));
  s.trainer->extend(reporter_of([](int64_t) { return -INFINITY; }, "inf"));
  s.trainer->extend(std::make_shared<T::LogReport>(
      T::LogReportOptions{.keys = {"nan", "inf"}, .trigger = {1, "iteration"}, .filename = "custom_log"}));
  s.trainer->run();
  const std::string text = read_text(dir / "out/custom_log");
  CHECK(text.find("\"nan\": NaN") != std::string::npos);
  CHECK(text.find("\"nan\": 1\n") != std::string::npos);
  CHECK(text.find("\"inf\": -Infinity") != std::string::npos);
  CHECK(text.find("main/loss") == std::string::npos);
  CHECK(T::log_to_json({}) == "[]");
  CHECK(T::log_to_json({{}}) == "[\n    {}\n]");
  CHECK(T::log_to_json({{{"quote\"back\\slash\nline", 0.1}}}) ==
        "[\n    {\n        \"quote\\\"back\\\\slash\\nline\": 0.1\n    }\n]");
  run_python_json_check(dir, R"(
import json, math, sys
log = json.load(open(sys.argv[1]))
assert math.isnan(log[0]["nan"]) and log[1]["nan"] == 1 and log[0]["inf"] == -math.inf, log
)", dir / "out/custom_log");
}

TEST_CASE("log_from_json reads back what log_to_json writes, and names what is wrong") {
  const std::vector<T::Observation> log{{{"epoch", 1}, {"main/loss", 0.25}, {"quote\"back\\slash\nline\x01", -1e-300},
                                         {"subnormal", 4.9e-324}},
                                        {{"nan", NAN}, {"inf", -INFINITY}, {"big", 1.5e300}},
                                        {}};
  const std::vector<T::Observation> back = T::log_from_json(T::log_to_json(log));
  REQUIRE(back.size() == 3);
  CHECK(back[0] == log[0]);
  CHECK(std::isnan(back[1].at("nan")));
  CHECK(back[1].at("inf") == -INFINITY);
  CHECK(back[1].at("big") == 1.5e300);
  CHECK(back[2].empty());
  CHECK(T::log_from_json(" [ ] ").empty());
  expect_error<ValueError>([] { T::log_from_json("[{\"a\": 1,}]"); }, {"offset 9", "'\"'"});
  expect_error<ValueError>([] { T::log_from_json("[{\"a\": x}]"); }, {"a finite number", "offset 7", "'x}]'"});
  expect_error<ValueError>([] { T::log_from_json("[{\"a\": 1e999}]"); }, {"a finite number", "offset 7"});
  expect_error<ValueError>([] { T::log_from_json("[{\"a\": 1}"); }, {"']'", "the end of the text"});
  expect_error<ValueError>([] { T::log_from_json("[] x"); }, {"the end of the log", "'x'"});
}

TEST_CASE("PrintReport prints a header and aligned columns for each new log entry") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {4, "iteration"});
  s.trainer->extend(reporter_of([](int64_t it) { return 0.25 * static_cast<double>(it); }, "main/accuracy"));
  s.trainer->extend(std::make_shared<T::LogReport>(T::LogReportOptions{.trigger = {2, "iteration"}}));
  std::ostringstream out;
  s.trainer->extend(std::make_shared<T::PrintReport>(
      std::vector<std::string>{"epoch", "iteration", "main/accuracy", "validation/main/loss"}, "LogReport", out));
  s.trainer->run();
  // Columns are max(10, name length) wide plus two spaces; a missing value leaves its column blank.
  const std::string blank_loss(22, ' ');
  CHECK(out.str() == "epoch       iteration   main/accuracy  validation/main/loss\n"
                     "0           2           0.375          " + blank_loss + "\n"
                     "1           4           0.875          " + blank_loss + "\n");
}

TEST_CASE("ProgressBar prints plain lines when not on a terminal and redraws in place on one") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {2, "epoch"});
  std::ostringstream plain;
  s.trainer->extend(std::make_shared<T::ProgressBar>(T::ProgressBarOptions{.update_interval = 2, .out = &plain}));
  s.trainer->run();
  std::vector<std::string> lines;
  std::istringstream in(plain.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 2);  // iterations 2 and 4 of 5
  CHECK(lines[0].rfind(" 40.00% 2 iterations, epoch 0, of 2 epochs, ", 0) == 0);
  CHECK(lines[1].rfind(" 80.00% 4 iterations, epoch 1, of 2 epochs, ", 0) == 0);
  CHECK(lines[1].find(" iterations/sec, estimated time left 0:00:0") != std::string::npos);
  CHECK(plain.str().find('\033') == std::string::npos);

  Setup t = make_setup(dir / "out2", {3, "iteration"});
  std::ostringstream terminal;
  t.trainer->extend(std::make_shared<T::ProgressBar>(
      T::ProgressBarOptions{.update_interval = 3, .bar_length = 10, .out = &terminal, .terminal = true}));
  t.trainer->run();
  const std::string drawn = terminal.str();
  INFO(drawn);
  CHECK(drawn.rfind("\r\033[J     total [##########] 100.00%\nthis epoch [##........]  20.00%\n", 0) == 0);
  CHECK(drawn.find("3 iterations, epoch 1, of 3 iterations\n") != std::string::npos);
  CHECK(drawn.find("\033[4A") != std::string::npos);
  CHECK(drawn.substr(drawn.size() - 4) == "\r\033[J");  // finalize clears the drawing

  Setup u = make_setup(dir / "out3", T::MinValueTrigger("main/loss"));
  std::ostringstream unused;
  u.trainer->extend(std::make_shared<T::ProgressBar>(T::ProgressBarOptions{.out = &unused}));
  expect_error<ValueError>([&] { u.trainer->run(); }, {"training_length"});
  expect_error<ValueError>([] { T::ProgressBar(T::ProgressBarOptions{.update_interval = 0}); }, {"update_interval"});
}

TEST_CASE("PlotReport writes an SVG line plot through a temporary file") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {4, "epoch"});
  s.trainer->extend(reporter_of([](int64_t it) { return 1.0 / static_cast<double>(it); }, "validation/main/loss"));
  s.trainer->extend(std::make_shared<T::PlotReport>(std::vector<std::string>{"main/loss", "validation/main/loss"},
                                                    T::PlotReportOptions{.filename = "loss.svg"}));
  s.trainer->run();
  const std::string svg = read_text(dir / "out/loss.svg");
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  size_t polylines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  CHECK(polylines == 2);
  CHECK(svg.find(">main/loss</text>") != std::string::npos);
  CHECK(svg.find(">validation/main/loss</text>") != std::string::npos);
  CHECK(svg.find(">epoch</text>") != std::string::npos);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir / "out")) files.push_back(entry.path().filename());
  CHECK(files == std::vector<std::string>{"loss.svg"});
  // Four points per line: x at epochs 1..4.
  const size_t line_start = svg.find("<polyline");
  const std::string points = svg.substr(svg.find("points=\"", line_start) + 8);
  CHECK(std::count(points.begin(), points.begin() + static_cast<long>(points.find('"')), ',') == 4);
  expect_error<ValueError>([] { T::PlotReport({}); }, {"at least one key"});
}

TEST_CASE("nice_ticks chooses round steps and the SVG survives degenerate and non-finite data") {
  CHECK(T::nice_ticks(0, 1) == std::vector<double>{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1});
  CHECK(T::nice_ticks(3, 97).front() == 20);
  // A flat series whose mean came out an ulp high (an lr held at 0.8): one tick, not an endless loop.
  CHECK(T::nice_ticks(0.8, 0.8000000000000002) == std::vector<double>{0.8});
  CHECK(T::nice_ticks(1e-12, 3e-12).size() >= 3);
  CHECK(T::nice_ticks(3, 97).back() == 80);
  const std::string svg = T::svg_line_plot({{"one", {1}, {2}}, {"odd <name>", {1, 2}, {NAN, INFINITY}}}, "x & y");
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("odd &lt;name&gt;") != std::string::npos);
  CHECK(svg.find("x &amp; y") != std::string::npos);
  CHECK(svg.find("points=\"\"") != std::string::npos);  // the second line has no finite point
  CHECK_FALSE(std::regex_search(svg, std::regex("[\",]-?(nan|inf)")));
}

TEST_CASE("Evaluator reports batch-size-weighted means under validation/ in evaluation mode") {
  // Five examples with x = 0..4 in batches of 2, 2, 1: the batch means are 0.5, 2.5, 4, whose
  // unweighted mean (7/3) differs from the example mean (2).
  auto data = std::make_shared<D::TupleDataset>(
      std::vector<Array>{Array::arange(0, 5, 1, Dtype::float64).reshape({5, 1}), Array::zeros({5, 1})});
  auto iterator = std::make_shared<D::SerialIterator>(data, 2, false, false);
  auto model = std::make_shared<Regressor>(1, 1, 5);
  std::vector<bool> link_train, config_train, backprop;
  T::Evaluator evaluator(iterator, [&](const std::vector<Array>& batch) {
    link_train.push_back(model->is_train());
    config_train.push_back(config().train);
    backprop.push_back(is_backprop_enabled());
    T::report({{"main/mean_x", ops::mean(batch[0])}, {"main/size", static_cast<double>(batch[0].shape()[0])}});
    return Variable();
  }, model);
  iterator->next();  // evaluate() starts from a reset iterator
  T::Observation result = evaluator.evaluate();
  CHECK(result.at("validation/main/mean_x") == doctest::Approx(2.0));
  CHECK(result.at("validation/main/size") == doctest::Approx((2 * 2 + 2 * 2 + 1 * 1) / 5.0));
  CHECK(link_train == std::vector<bool>{false, false, false});
  CHECK(config_train == std::vector<bool>{false, false, false});
  CHECK(backprop == std::vector<bool>{false, false, false});
  CHECK(model->is_train());
  CHECK(config().train);
  CHECK(is_backprop_enabled());
  // A repeating iterator is used for one epoch only.
  auto repeating = std::make_shared<D::SerialIterator>(data, 2, true, false);
  int batches = 0;
  T::Evaluator once(repeating, [&](const std::vector<Array>&) { ++batches; return Variable(); });
  once.evaluate();
  CHECK(batches == 3);
}

TEST_CASE("Evaluator as an extension: a model's loss under validation/main/loss, once per epoch") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {6, "epoch"});
  auto validation = std::make_shared<D::SerialIterator>(regression_data(6, 99), 4, false, false);
  s.trainer->extend(std::make_shared<T::Evaluator>(validation, s.model));
  std::vector<double> seen;
  s.trainer->extend(T::make_extension([&seen](T::Trainer& t) {
    if (auto it = t.observation().find("validation/main/loss"); it != t.observation().end()) seen.push_back(it->second);
  }, "watch"));
  s.trainer->run();
  REQUIRE(seen.size() == 6);
  CHECK(seen.back() < seen.front());
  T::Evaluator direct(validation, s.model);
  CHECK(direct.evaluate().at("validation/main/loss") == doctest::Approx(seen.back()));
  expect_error<ValueError>([&] { T::Evaluator(nullptr, s.model); }, {"iterator"});
}

TEST_CASE("snapshot writes the trainer atomically, keeps the newest n_retains and autoloads the newest") {
  TempDir dir;
  const std::string out = dir / "out";
  {
    Setup s = make_setup(out, {5, "iteration"});
    s.trainer->extend(T::snapshot({.n_retains = 2}), {1, "iteration"});
    s.trainer->run();
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"snapshot_iter_4", "snapshot_iter_5"});

  Setup resumed = make_setup(out, {7, "iteration"});
  auto snap = T::snapshot({.autoload = true, .strict = false});  // the recorder below is new
  resumed.trainer->extend(snap, {100, "iteration"});
  std::vector<int64_t> iterations;
  resumed.trainer->extend(iteration_recorder(iterations, {1, "iteration"}));
  resumed.trainer->run();
  REQUIRE(snap->autoloaded());
  CHECK(fs::path(*snap->autoloaded()).filename() == "snapshot_iter_5");
  CHECK(iterations == std::vector<int64_t>{6, 7});
  CHECK(resumed.optimizer->t() == 7);
  expect_error<ValueError>([] { T::snapshot({.filename = "sub/snap_{iteration}"}); }, {"without a directory"});
  expect_error<ValueError>([] { T::snapshot({.n_retains = 0}); }, {"n_retains"});
}

TEST_CASE("autoload skips a corrupted newest snapshot and fails when none loads") {
  TempDir dir;
  const std::string out = dir / "out";
  {
    Setup s = make_setup(out, {3, "iteration"});
    s.trainer->extend(T::snapshot(), {1, "iteration"});
    s.trainer->run();
  }
  std::string newest = read_text(out + "/snapshot_iter_3");
  newest.resize(newest.size() / 2);
  write_bytes(out + "/snapshot_iter_3", std::vector<uint8_t>(newest.begin(), newest.end()));
  write_bytes(out + "/snapshot_iter_10", {'n', 'o', 't', ' ', 'a', ' ', 'z', 'i', 'p'});
  {
    Setup resumed = make_setup(out, {4, "iteration"});
    auto snap = T::snapshot({.autoload = true});
    resumed.trainer->extend(snap, {100, "iteration"});
    resumed.trainer->run();
    REQUIRE(snap->autoloaded());
    CHECK(fs::path(*snap->autoloaded()).filename() == "snapshot_iter_2");
    CHECK(resumed.updater->iteration() == 4);
    CHECK(snap->find_snapshots(out).size() == 4);
  }
  for (const char* name : {"snapshot_iter_1", "snapshot_iter_2"}) write_bytes(out + "/" + name, {0});
  Setup failing = make_setup(out, {4, "iteration"});
  failing.trainer->extend(T::snapshot({.autoload = true}));
  expect_error<IOError>([&] { failing.trainer->run(); }, {"no snapshot", "snapshot_iter_10", "snapshot_iter_1:"});
  CHECK(failing.updater->iteration() == 0);
}

TEST_CASE("a snapshot of another trainer setup does not load: the mismatch is named") {
  TempDir dir;
  const std::string out = dir / "out";
  {
    Setup s = make_setup(out, {1, "iteration"});
    s.trainer->extend(T::snapshot(), {1, "iteration"});
    s.trainer->run();
  }
  Setup other = make_setup(out, {2, "iteration"});
  other.trainer->extend(std::make_shared<T::LogReport>());  // state the snapshot lacks
  other.trainer->extend(T::snapshot({.autoload = true}));
  expect_error<IOError>([&] { other.trainer->run(); }, {"extensions/LogReport", "not found"});
}

TEST_CASE("snapshot_object saves one object under a formatted name") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {2, "epoch"});
  s.trainer->extend(T::snapshot_object(s.model, "model_epoch_{epoch}"), {1, "epoch"});
  s.trainer->extend(T::snapshot_object(s.optimizer, "opt.{iteration}.npz", {.n_retains = 1}), {1, "iteration"});
  s.trainer->run();
  CHECK(fs::exists(dir / "out/model_epoch_1"));
  CHECK(fs::exists(dir / "out/opt.5.npz"));
  CHECK_FALSE(fs::exists(dir / "out/opt.4.npz"));
  Regressor loaded(3, 2, 99);
  serializers::load_npz(dir / "out/model_epoch_2", loaded);
  CHECK(parameters(loaded) == parameters(*s.model));
}

TEST_CASE("ScheduleShift sets the hyperparameter before each update from iterations or epochs") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {4, "iteration"});
  auto schedule = std::make_shared<optimizers::LinearSchedule>(1.0, 0.0, 4);
  s.trainer->extend(std::make_shared<T::ScheduleShift>("lr", schedule));
  s.trainer->extend(std::make_shared<T::ScheduleShift>(
      "momentum", std::make_shared<optimizers::StepSchedule>(0.8, 0.5, 1), "epoch"));
  std::vector<double> lrs, momenta;
  s.optimizer->add_hook([&](optimizers::Optimizer& o, std::vector<optimizers::GradientEntry>&) {
    lrs.push_back(o.lr());
    momenta.push_back(o.hyperparam().get("momentum"));
  }, "watch");
  s.trainer->run();
  CHECK(lrs == std::vector<double>{1.0, 0.75, 0.5, 0.25});
  // epoch_detail before each update is 0, 0.4, 0.8, 1.2 (the shift runs after the previous update).
  CHECK(momenta == std::vector<double>{0.8, 0.8, 0.8, 0.4});
  expect_error<ValueError>([&] { T::ScheduleShift("lr", schedule, "epochs"); }, {"\"epochs\""});
  expect_error<ValueError>([&] { T::ScheduleShift("lr", nullptr); }, {"schedule"});
  Setup unknown = make_setup(dir / "unknown", {1, "iteration"});
  unknown.trainer->extend(std::make_shared<T::ScheduleShift>("no_such_rate", schedule));
  expect_error<ValueError>([&] { unknown.trainer->run(); }, {"no_such_rate"});
}

TEST_CASE("FailOnNonNumber stops training naming the parameter that became NaN or infinite") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {10, "iteration"});
  s.trainer->extend(std::make_shared<T::FailOnNonNumber>());
  s.trainer->extend(T::make_extension([](T::Trainer& t) {
    if (t.updater().iteration() == 3) t.updater().optimizer().target()->param("b").data().fill(INFINITY);
  }, "poison", {1, "iteration"}, T::kPriorityWriter + 1));
  expect_error<ValueError>([&] { s.trainer->run(); }, {"FailOnNonNumber", "'/b'", "iteration 3"});
  CHECK(s.updater->iteration() == 3);
  // Checking every 4 iterations: a NaN from iteration 1 is found at 4 in epochs of 25 iterations, at
  // the end of the first epoch (iteration 3) in epochs of 2.5.
  for (const auto& [dataset_size, found_at] : {std::pair<int64_t, int64_t>{100, 4}, {10, 3}}) {
    Setup every = make_setup(dir / cat("every_", dataset_size), {10, "iteration"}, dataset_size);
    every.trainer->extend(std::make_shared<T::FailOnNonNumber>(T::FailOnNonNumberOptions{.every = 4}));
    every.trainer->extend(T::make_extension([](T::Trainer& t) {
      if (t.updater().iteration() == 1) t.updater().optimizer().target()->param("b").data().fill(NAN);
    }, "poison", {1, "iteration"}, T::kPriorityWriter + 1));
    // (by then the NaN has spread from b into W, the first parameter in path order)
    expect_error<ValueError>([&] { every.trainer->run(); }, {"holds NaN", cat("iteration ", found_at)});
    CHECK(every.updater->iteration() == found_at);
  }
  expect_error<ValueError>([] { T::FailOnNonNumber({.every = 0}); }, {"every >= 1", "got 0"});
}

TEST_CASE("resuming from a snapshot continues exactly as uninterrupted training") {
  TempDir dir;
  constexpr int64_t k = 7, m = 6;  // 10 examples in shuffled batches of 4: the break falls mid-epoch
  auto add_extensions = [](Setup& s) {
    s.trainer->extend(std::make_shared<T::LogReport>(T::LogReportOptions{.trigger = {1, "epoch"}}));
    s.trainer->extend(std::make_shared<T::ScheduleShift>(
        "lr", std::make_shared<optimizers::ExponentialSchedule>(0.05, 0.9), "iteration"));
  };
  Setup straight = make_setup(dir / "straight", {k + m, "iteration"});
  add_extensions(straight);
  straight.trainer->run();

  Setup first = make_setup(dir / "resumed", {k, "iteration"});
  add_extensions(first);
  first.trainer->extend(T::snapshot(), {k, "iteration"});
  first.trainer->run();
  Setup second = make_setup(dir / "resumed", {k + m, "iteration"});
  add_extensions(second);
  auto snap = T::snapshot({.autoload = true});
  second.trainer->extend(snap, {k, "iteration"});
  second.trainer->run();
  REQUIRE(snap->autoloaded());

  CHECK(second.updater->iteration() == k + m);
  CHECK(parameters(*second.model) == parameters(*straight.model));
  for (const char* path : {"/W", "/b"}) {
    const auto& resumed_v = second.optimizer->update_rule(path).states().at("v");
    const auto& straight_v = straight.optimizer->update_rule(path).states().at("v");
    CHECK(resumed_v.to_vector<double>() == straight_v.to_vector<double>());
  }
  const auto& straight_log = straight.trainer->get_extension<T::LogReport>("LogReport").log();
  const auto& resumed_log = second.trainer->get_extension<T::LogReport>("LogReport").log();
  REQUIRE(resumed_log.size() == straight_log.size());
  for (size_t i = 0; i < straight_log.size(); ++i) {
    CHECK(resumed_log[i].at("main/loss") == straight_log[i].at("main/loss"));
    CHECK(resumed_log[i].at("iteration") == straight_log[i].at("iteration"));
  }
}
