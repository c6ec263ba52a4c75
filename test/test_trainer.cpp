#include "training_fixtures.h"

#include <unistd.h>

#include <fstream>
#include <limits>
#include <stdexcept>
#include <tuple>

using namespace kusari;
using namespace kusari::testing;

// Whether this build runs under AddressSanitizer (scripts/sanitize.sh), which keeps freed memory in
// quarantine for a while, so that a process's resident memory says nothing of kusari's own.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

namespace {

// Every iteration, reports the next value of a fixed sequence under `key`.
std::shared_ptr<T::Extension> scripted_reporter(std::vector<double> values, const std::string& key) {
  auto next = std::make_shared<size_t>(0);
  return T::make_extension(
      [values, key, next](T::Trainer&) { T::report({{key, values.at((*next)++ % values.size())}}); }, "script",
      {1, "iteration"}, T::kPriorityWriter);
}

// The process's resident memory now, in bytes (/proc/self/statm).
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace

TEST_CASE("report writes doubles, 0-d arrays and variables into the innermost scope, and nowhere without one") {
  T::report({{"ignored", 1.0}});
  T::Observation outer, inner;
  {
    auto outer_scope = T::report_scope(outer);
    T::report({{"a", 1.5}, {"b", Array::scalar(2.5, Dtype::float16)}});
    {
      auto inner_scope = T::report_scope(inner);
      T::report({{"c", Variable(Array::from_vector<double>({4}, {1}))}});
    }
    T::report({{"d", 3}});
  }
  CHECK(outer == T::Observation{{"a", 1.5}, {"b", 2.5}, {"d", 3}});
  CHECK(inner == T::Observation{{"c", 4}});
  T::Observation unchanged;
  auto scope = T::report_scope(unchanged);
  expect_error<ShapeError>([] { T::report({{"main/loss", Array::zeros({2})}}); },
                           {"main/loss", "scalar", "(2,)"});
  T::Reporter reporter;
  reporter.report({{"x", 1.0}});
  CHECK(reporter.observation().at("x") == 1.0);
  {
    auto redirected = reporter.scope();
    T::report({{"y", 2.0}});
  }
  CHECK(reporter.observation().size() == 2);
  reporter.clear();
  CHECK(reporter.observation().empty());
}

TEST_CASE("DictSummary gives weighted means per key, merges another summary and round-trips through NPZ") {
  T::DictSummary summary;
  summary.add({{"loss", 1.0}, {"accuracy", 0.5}}, 3);
  summary.add({{"loss", 3.0}}, 1);
  CHECK(summary.compute_mean() == T::Observation{{"accuracy", 0.5}, {"loss", 1.5}});
  expect_error<ValueError>([&] { summary.add({{"loss", 1.0}}, 0); }, {"weight > 0", "got 0"});
  TempDir dir;
  serializers::save_npz(dir / "summary.npz", summary);
  T::DictSummary loaded;
  loaded.add({{"stale", 9.0}});
  serializers::load_npz(dir / "summary.npz", loaded);
  CHECK(loaded.compute_mean() == summary.compute_mean());
  loaded.add({{"loss", 5.5}}, 4);
  CHECK(loaded.compute_mean().at("loss") == doctest::Approx((6.0 + 22.0) / 8));
  T::DictSummary other;
  other.add({{"loss", 7.0}, {"extra", 2.0}}, 2);
  summary.merge(other);
  CHECK(summary.compute_mean() == T::Observation{{"accuracy", 0.5}, {"extra", 2.0}, {"loss", (3.0 + 3.0 + 14.0) / 6}});
  summary.clear();
  CHECK(summary.empty());
}

TEST_CASE("a value reported on a device stays there, a copy, until read; DictSummary sums it there") {
  const Device device = Device::loopback(0);
  const Array loss = Array::scalar(2.0, Dtype::float32).to(device);
  T::Observation seen;
  {
    auto scope = T::report_scope(seen);
    T::report({{"main/loss", Variable(loss)}, {"host", Array::scalar(1.0)}});
  }
  CHECK(seen.at("main/loss").on_device().device() == device);
  CHECK_FALSE(seen.at("host").on_device().defined());  // a host array is read at once
  loss.assign(Array::scalar(5.0, Dtype::float32).to(device));  // the report kept its own copy
  T::DictSummary summary;
  summary.add(seen, 3);
  summary.add({{"main/loss", T::ReportValue(Array::scalar(4.0, Dtype::float16).to(device)).recorded("main/loss")}}, 1);
  CHECK(seen.at("main/loss").on_device().defined());  // adding read nothing
  T::DictSummary other;
  other.add({{"main/loss", T::ReportValue(Array::scalar(8.0).to(device)).recorded("main/loss")}}, 4);
  TempDir dir;
  serializers::save_npz(dir / "summary.npz", other);
  T::DictSummary loaded;
  serializers::load_npz(dir / "summary.npz", loaded);
  CHECK(loaded.compute_mean().at("main/loss") == 8.0);
  summary.merge(loaded);
  CHECK(summary.compute_mean().at("main/loss") == doctest::Approx((3 * 2.0 + 4.0 + 4 * 8.0) / 8));
  CHECK(summary.compute_mean().at("host") == 1.0);
  // Read once, the number is kept and the device's array let go.
  CHECK(seen.at("main/loss") == 2.0);
  CHECK_FALSE(seen.at("main/loss").on_device().defined());
  // A key whose values move to another device keeps its sum.
  T::DictSummary moved;
  moved.add({{"x", T::ReportValue(Array::scalar(1.0).to(device)).recorded("x")}});
  moved.add({{"x", T::ReportValue(Array::scalar(3.0).to(Device::loopback(1))).recorded("x")}});
  CHECK(moved.compute_mean().at("x") == 2.0);
  expect_error<ShapeError>([&] { (void)T::ReportValue(Array::zeros({3}).to(device)).recorded("main/loss"); },
                           {"main/loss", "scalar", "(3,)"});
}

TEST_CASE("trained on a device, the loss stays there every iteration and the log equals the CPU's") {
  TempDir dir;
  // Six iterations of the regressor on `device`: how many times an extension found the iteration's
  // loss still on a device, and LogReport's entries (one per 2 iterations).
  const auto train = [&dir](const Device& device, const std::string& name) {
    auto model = std::make_shared<Regressor>(3, 2, 11);
    model->to_device(device);
    auto optimizer = std::make_shared<optimizers::MomentumSGD>(0.05, 0.9);
    optimizer->setup(model);
    auto iterator = std::make_shared<D::SerialIterator>(regression_data(10), 4, true, true, 3);
    auto updater = std::make_shared<T::StandardUpdater>(iterator, optimizer, model, device);
    T::Trainer trainer(updater, {6, "iteration"}, dir / name);
    int on_device = 0;
    trainer.extend(T::make_extension(
        [&on_device](T::Trainer& t) { on_device += t.observation().at("main/loss").on_device().defined() ? 1 : 0; },
        "peek", {1, "iteration"}, T::kPriorityWriter + 10));
    trainer.extend(std::make_shared<T::LogReport>(T::LogReportOptions{.trigger = {2, "iteration"}}));
    trainer.run();
    return std::make_pair(on_device, trainer.get_extension<T::LogReport>("LogReport").log());
  };
  const auto on_cpu = train(Device::cpu(), "cpu");
  const auto on_loopback = train(Device::loopback(0), "loopback");
  CHECK(on_cpu.first == 0);
  CHECK(on_loopback.first == 6);
  REQUIRE(on_cpu.second.size() == 3);
  REQUIRE(on_loopback.second.size() == 3);
  // loopback:0 runs the CPU's kernels, and the device's float64 sums add in the host's order.
  for (size_t i = 0; i < 3; ++i) CHECK(on_loopback.second[i].at("main/loss") == on_cpu.second[i].at("main/loss"));
}

namespace {

// A predictor of 3 classes from (N, C, H, W) images that notes the memory order and dtype it was given:
// the images flattened, times a fixed (C·H·W, 3) matrix.
class OrderProbe : public L::Cloneable<OrderProbe, L::Link> {
 public:
  using L::Link::forward;
  explicit OrderProbe(int64_t features) { add_param("W", Array::uniform({3, features}, -0.5, 0.5, 11)); }
  Variable forward(const Variable& x) override {
    seen_order = memory_order_of(x.data());
    seen_dtype = x.dtype();
    seen_storage = x.data().storage().get();
    return F::linear(F::reshape(x, {x.shape()[0], -1}), F::cast(param("W"), x.dtype()));
  }
  MemoryOrder seen_order = MemoryOrder::row_major;
  Dtype seen_dtype = Dtype::float32;
  const Storage* seen_storage = nullptr;
};

}  // namespace

TEST_CASE("classification_loss puts image batches in its memory order and dtype before the model, same loss") {
  const Array x = Array::uniform({4, 3, 5, 6}, -1, 1, 3), t = Array::from_vector<int32_t>({0, 2, 1, 2}, {4});
  auto probe = std::make_shared<OrderProbe>(3 * 5 * 6);
  const double row_major = T::classification_loss(probe)({x, t}).data().item<double>();
  CHECK(probe->seen_order == MemoryOrder::row_major);
  for (const Dtype dtype : {Dtype::float32, Dtype::bfloat16}) {
    CAPTURE(dtype);
    const T::LossFunction loss =
        T::classification_loss(probe, {.compute_dtype = dtype, .memory_order = MemoryOrder::channels_last});
    const double channels_last = loss({x, t}).data().item<double>();
    CHECK(probe->seen_order == MemoryOrder::channels_last);
    CHECK(probe->seen_dtype == dtype);
    CHECK(channels_last == doctest::Approx(row_major).epsilon(dtype == Dtype::float32 ? 1e-6 : 2e-2));
    // A batch already channels-last keeps the order through the cast.
    loss({in_order(x, MemoryOrder::channels_last), t});
    CHECK(probe->seen_order == MemoryOrder::channels_last);
    CHECK(probe->seen_dtype == dtype);
  }
}

TEST_CASE("classification_loss says a one-channel batch is channels-last without copying its bytes") {
  // One channel is dense in both orders: the model is given the batch's own bytes, marked channels-last
  // (axis 1's stride 1), so that its first convolution writes channels-last as it would for RGB images.
  const Array x = Array::uniform({4, 1, 5, 6}, -1, 1, 5), t = Array::from_vector<int32_t>({1, 0, 2, 2}, {4});
  auto probe = std::make_shared<OrderProbe>(5 * 6);
  const double row_major = T::classification_loss(probe)({x, t}).data().item<double>();
  CHECK(probe->seen_order == MemoryOrder::row_major);
  const double channels_last =
      T::classification_loss(probe, {.memory_order = MemoryOrder::channels_last})({x, t}).data().item<double>();
  CHECK(probe->seen_order == MemoryOrder::channels_last);
  CHECK(probe->seen_storage == x.storage().get());
  CHECK(channels_last == row_major);
  // Converted to another dtype in the same copy, the copy is marked too.
  T::classification_loss(probe, {.compute_dtype = Dtype::bfloat16, .memory_order = MemoryOrder::channels_last})(
      {x, t});
  CHECK(probe->seen_order == MemoryOrder::channels_last);
  CHECK(probe->seen_dtype == Dtype::bfloat16);
  CHECK(probe->seen_storage != x.storage().get());
}

TEST_CASE("serialize_strings and serialize_vector round-trip lists, empty ones included") {
  TempDir dir;
  std::vector<std::string> names{"main/loss", "", "validation/main/accuracy"}, none;
  std::vector<double> values{1.5, -2};
  std::vector<int64_t> counts{};
  serializers::save_npz(dir / "lists.npz", serializers::SerializeFunction([&](Serializer& s) {
    T::serialize_strings(s, "names", names);
    T::serialize_strings(s, "none", none);
    T::serialize_vector(s, "values", values);
    T::serialize_vector(s, "counts", counts);
  }));
  std::vector<std::string> names2{"x"}, none2{"y"};
  std::vector<double> values2;
  std::vector<int64_t> counts2{5};
  serializers::load_npz(dir / "lists.npz", serializers::SerializeFunction([&](Serializer& s) {
    T::serialize_strings(s, "names", names2);
    T::serialize_strings(s, "none", none2);
    T::serialize_vector(s, "values", values2);
    T::serialize_vector(s, "counts", counts2);
  }));
  CHECK(names2 == names);
  CHECK(none2.empty());
  CHECK(values2 == values);
  CHECK(counts2.empty());
  std::vector<std::string> bad{"two\nlines"};
  const serializers::SerializeFunction save_bad = [&](Serializer& s) { T::serialize_strings(s, "bad", bad); };
  expect_error<ValueError>([&] { serializers::save_npz(dir / "bad.npz", save_bad); }, {"newline", "two"});
}

TEST_CASE("a tiny model trains: the loss falls and the counters advance") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {30, "iteration"}, 12, 4);
  std::vector<double> losses;
  s.trainer->extend(T::make_extension(
      [&losses](T::Trainer& t) { losses.push_back(t.observation().at("main/loss")); }, "loss_recorder"));
  s.trainer->run();
  REQUIRE(losses.size() == 30);
  CHECK(losses.back() < 0.2 * losses.front());
  CHECK(s.updater->iteration() == 30);
  CHECK(s.updater->epoch() == 10);
  CHECK(s.updater->epoch_detail() == doctest::Approx(10.0));
  CHECK(s.updater->is_new_epoch());
  CHECK(s.optimizer->t() == 30);
  CHECK(s.optimizer->epoch() == 10);
  CHECK(std::filesystem::is_directory(dir / "out"));
  CHECK(s.trainer->elapsed_time() > 0);
}

TEST_CASE("StandardUpdater takes any loss function and checks its arguments") {
  auto model = std::make_shared<Regressor>(3, 2, 1);
  auto optimizer = std::make_shared<optimizers::SGD>(0.1);
  auto iterator = std::make_shared<D::SerialIterator>(regression_data(6), 3, true, false);
  expect_error<ValueError>([&] { T::StandardUpdater(iterator, optimizer, model); }, {"setup"});
  optimizer->setup(model);
  std::vector<Shape> seen;
  T::StandardUpdater updater(iterator, optimizer, [&](const std::vector<Array>& batch) {
    seen.push_back(batch[0].shape());
    return model->forward(Variable(batch[0], false), Variable(batch[1], false));
  });
  updater.update();
  CHECK(seen == std::vector<Shape>{Shape{3, 3}});
  CHECK(updater.iteration() == 1);
  CHECK(updater.epoch_detail() == doctest::Approx(0.5));
  CHECK(*updater.previous_epoch_detail() == doctest::Approx(0.0));
  updater.update();
  CHECK(updater.is_new_epoch());
  CHECK(optimizer->epoch() == 1);
  CHECK(optimizer->epoch_detail() == doctest::Approx(0.5));  // set before the update that ended the epoch
  expect_error<ValueError>([&] { T::StandardUpdater(nullptr, optimizer, model); }, {"iterator"});
  expect_error<ValueError>([&] { T::StandardUpdater(iterator, optimizer, T::LossFunction()); }, {"loss function"});
  auto once = std::make_shared<D::SerialIterator>(regression_data(3), 3, false, false);
  T::StandardUpdater exhausted(once, optimizer, model);
  exhausted.update();
  expect_error<ValueError>([&] { exhausted.update(); }, {"ran out of batches", "iteration 1", "repeat"});
  auto three = std::make_shared<D::TupleDataset>(std::vector<Array>{Array::zeros({2, 3}), Array::zeros({2, 2}),
                                                                     Array::zeros({2, 1})});
  T::StandardUpdater wrong(std::make_shared<D::SerialIterator>(three, 2), optimizer, model);
  expect_error<ValueError>([&] { wrong.update(); }, {"two components", "got 3"});
}

TEST_CASE("the trainer's serialization follows Chainer's key layout") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {2, "iteration"});
  s.trainer->extend(std::make_shared<T::LogReport>());
  s.trainer->run();
  serializers::save_npz(dir / "trainer.npz", *s.trainer);
  // Each key is readable at its Chainer path.
  for (const char* key : {"updater/iteration", "updater/iterator:main/current_position", "updater/iterator:main/order",
                          "updater/optimizer:main/t", "updater/optimizer:main/W/v", "updater/model:main/W",
                          "updater/model:main/b", "extensions/LogReport/summary/keys",
                          "extension_triggers/LogReport/previous", "stop_trigger/previous", "elapsed_time"}) {
    INFO(key);
    Array value;
    CHECK_NOTHROW(serializers::load_npz(dir / "trainer.npz", serializers::SerializeFunction(
                                                                  [&](Serializer& r) { r(key, value); })));
  }
}

TEST_CASE("a snapshot holding an impossible count, order or progress is refused, naming the value") {
  TempDir dir;
  Setup saved = make_setup(dir / "out", {3, "iteration"});
  saved.trainer->extend(std::make_shared<T::LogReport>());
  saved.trainer->run();
  serializers::DictSerializer writer;
  saved.trainer->serialize(writer);
  // Each tampered value, loaded into a fresh trainer, and what its error must say.
  const std::vector<std::tuple<std::string, Array, std::vector<std::string>>> cases = {
      {"updater/iteration", Array::full({}, -4, Dtype::int64), {"StandardUpdater", "iteration in [0, 2^53]", "-4"}},
      {"updater/iterator:main/epoch", Array::full({}, -1, Dtype::int64), {"iterator", "epoch in [0, 2^53]", "-1"}},
      {"updater/optimizer:main/t", Array::full({}, -2, Dtype::int64), {"Optimizer", "t in [0, 2^53]", "-2"}},
      {"updater/optimizer:main/W/t", Array::full({}, -3, Dtype::int64), {"UpdateRule", "t in [0, 2^53]", "-3"}},
      {"updater/iteration", Array::full({}, 0x1p62, Dtype::int64), {"iteration in [0, 2^53]", "4611686018427387904"}},
      {"elapsed_time", Array::full({}, std::numeric_limits<double>::quiet_NaN(), Dtype::float64), {"Trainer", "elapsed_time", "finite", "nan"}},
      {"stop_trigger/previous", Array::full({}, -7, Dtype::float64), {"trigger", "previous", ">= -1", "-7"}},
      {"updater/iterator:main/order", Array::from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 10}, {10}),
       {"permutation of 0..9", "got 10 at position 9"}},
      {"updater/iterator:main/order", Array::from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 8}, {10}),
       {"permutation of 0..9", "got 8 at position 9 again"}},
  };
  for (const auto& entry : cases) {
    const auto& key = std::get<0>(entry);
    const auto& value = std::get<1>(entry);
    const auto& fragments = std::get<2>(entry);
    INFO(key);
    serializers::ArrayDict values = writer.values();
    values.at(key) = value;
    Setup fresh = make_setup(dir / "fresh", {6, "iteration"});
    fresh.trainer->extend(std::make_shared<T::LogReport>());
    serializers::DictDeserializer reader(std::move(values));
    expect_error<ValueError>([&] { fresh.trainer->serialize(reader); }, fragments);
  }
  // A trigger whose saved progress is past the trainer's own (saved while it counted another unit)
  // starts over: the run goes on to its stop.
  serializers::ArrayDict values = writer.values();
  values.at("stop_trigger/previous") = Array::full({}, 50, Dtype::float64);
  Setup ahead = make_setup(dir / "ahead", {6, "iteration"});
  ahead.trainer->extend(std::make_shared<T::LogReport>());
  serializers::DictDeserializer reader(std::move(values));
  ahead.trainer->serialize(reader);
  ahead.trainer->run();
  CHECK(ahead.updater->iteration() == 6);
}

TEST_CASE("IntervalTrigger fires every period of iterations or (fractional) epochs") {
  TempDir dir;
  // 10 examples in batches of 4: epoch_detail after each iteration is 0.4, 0.8, 1.2, 1.6, 2.0, 2.4, ...
  Setup s = make_setup(dir / "out", {8, "iteration"});
  std::vector<int64_t> every3, epochs, half_epochs;
  s.trainer->extend(iteration_recorder(every3, {3, "iteration"}, "every3"));
  s.trainer->extend(iteration_recorder(epochs, {1, "epoch"}, "epochs"));
  s.trainer->extend(iteration_recorder(half_epochs, {0.5, "epoch"}, "half_epochs"));
  s.trainer->run();
  CHECK(every3 == std::vector<int64_t>{3, 6});
  CHECK(epochs == std::vector<int64_t>{3, 5, 8});
  CHECK(half_epochs == std::vector<int64_t>{2, 3, 4, 5, 7, 8});
  CHECK(s.updater->iteration() == 8);
}

TEST_CASE("an epoch stop trigger ends training after the epoch's last batch") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {2, "epoch"});
  s.trainer->run();
  CHECK(s.updater->iteration() == 5);
  CHECK(s.updater->epoch() == 2);
  auto length = s.trainer->stop_trigger().training_length();
  REQUIRE(length);
  CHECK(length->length == 2);
  CHECK(length->unit == "epoch");
}

TEST_CASE("ManualScheduleTrigger fires when the progress reaches each point") {
  TempDir dir;
  Setup s = make_setup(dir / "out", T::ManualScheduleTrigger({4, 6}, "iteration"));
  std::vector<int64_t> at_iterations, at_epochs;
  s.trainer->extend(iteration_recorder(at_iterations, T::ManualScheduleTrigger({2, 5}, "iteration"), "it"));
  s.trainer->extend(iteration_recorder(at_epochs, T::ManualScheduleTrigger({1.0, 1.5}, "epoch"), "ep"));
  s.trainer->run();
  CHECK(s.updater->iteration() == 4);  // the stop trigger's first point
  CHECK(at_iterations == std::vector<int64_t>{2});
  CHECK(at_epochs == std::vector<int64_t>{3, 4});  // 1.2 crosses 1.0; 1.6 crosses 1.5
  CHECK(T::Trigger(T::ManualScheduleTrigger({4, 6}, "iteration")).training_length()->length == 6);
}

TEST_CASE("trigger arguments are checked") {
  expect_error<ValueError>([] { T::IntervalTrigger(0, "iteration"); }, {"period > 0", "got 0"});
  expect_error<ValueError>([] { T::IntervalTrigger(1, "epochs"); }, {"IntervalTrigger", "\"epochs\""});
  expect_error<ValueError>([] { T::ManualScheduleTrigger({}, "epoch"); }, {"at least one point"});
  expect_error<ValueError>([] { T::ManualScheduleTrigger({-1}, "epoch"); }, {"points >= 0", "-1"});
  expect_error<ValueError>([] { T::ManualScheduleTrigger({1}, "iter"); }, {"ManualScheduleTrigger", "\"iter\""});
}

TEST_CASE("MinValueTrigger and MaxValueTrigger fire when the interval mean improves") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {8, "iteration"});
  // Per iteration 5, 3, 4, 1, 2, 2, 9, 1: means over pairs of iterations are 4, 2.5, 2, 5.
  s.trainer->extend(scripted_reporter({5, 3, 4, 1, 2, 2, 9, 1}, "score"));
  std::vector<int64_t> lower, higher, each;
  s.trainer->extend(iteration_recorder(lower, T::MinValueTrigger("score", {2, "iteration"}), "lower"));
  s.trainer->extend(iteration_recorder(higher, T::MaxValueTrigger("score", {2, "iteration"}), "higher"));
  s.trainer->extend(iteration_recorder(each, T::MinValueTrigger("score", {1, "iteration"}), "each"));
  s.trainer->run();
  CHECK(lower == std::vector<int64_t>{2, 4, 6});
  CHECK(higher == std::vector<int64_t>{2, 8});
  CHECK(each == std::vector<int64_t>{1, 2, 4});

  Setup missing = make_setup(dir / "missing", {3, "iteration"});
  std::vector<int64_t> never;
  missing.trainer->extend(iteration_recorder(never, T::MinValueTrigger("validation/main/loss", {2, "iteration"})));
  expect_error<ValueError>([&] { missing.trainer->run(); }, {"'validation/main/loss' was not observed", "'main/loss'"});
}

TEST_CASE("extensions run by priority, then in the order they were added; names are made unique") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {1, "iteration"});
  std::vector<std::string> order;
  auto named = [&order](const std::string& label, int priority) {
    return T::make_extension([&order, label](T::Trainer&) { order.push_back(label); }, "ext", {1, "iteration"},
                             priority);
  };
  s.trainer->extend(named("reader", T::kPriorityReader));
  s.trainer->extend(named("snapshot", T::kPrioritySnapshot));
  s.trainer->extend(named("writer", T::kPriorityWriter));
  s.trainer->extend(named("second reader", T::kPriorityReader));
  s.trainer->extend(named("promoted", T::kPriorityReader), {}, 1000);
  s.trainer->run();
  CHECK(order == std::vector<std::string>{"promoted", "writer", "reader", "second reader", "snapshot"});
  CHECK_NOTHROW(s.trainer->get_extension("ext"));
  CHECK_NOTHROW(s.trainer->get_extension("ext_4"));
  expect_error<ValueError>([&] { s.trainer->get_extension("nope"); }, {"'nope'", "'ext', 'ext_1'"});
  expect_error<ValueError>([&] { s.trainer->get_extension<T::LogReport>("ext"); }, {"'ext'", "requested type"});
}

TEST_CASE("an exception ends training: every extension is finalized and the error propagates") {
  struct Counting : T::Extension {
    int initialized = 0, finalized = 0;
    void operator()(T::Trainer&) override {}
    std::string default_name() const override { return "counting"; }
    void initialize(T::Trainer&) override { ++initialized; }
    void finalize(T::Trainer&) override { ++finalized; }
  };
  TempDir dir;
  Setup s = make_setup(dir / "out", {10, "iteration"});
  auto counting = std::make_shared<Counting>();
  s.trainer->extend(counting);
  s.trainer->extend(T::make_extension([](T::Trainer& t) {
    if (t.updater().iteration() == 3) throw std::runtime_error("boom at 3");
  }, "thrower"));
  try {
    s.trainer->run();
    FAIL("expected an exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "boom at 3");
  }
  CHECK(counting->initialized == 1);
  CHECK(counting->finalized == 1);
  CHECK(s.updater->iteration() == 3);
  // The trainer can run again, continuing where it stopped.
  s.trainer->run();
  CHECK(s.updater->iteration() == 10);
  CHECK(counting->finalized == 2);
}

TEST_CASE("extend is refused while running; bad constructor arguments are refused") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {1, "iteration"});
  s.trainer->extend(T::make_extension([](T::Trainer& t) {
    t.extend(T::make_extension([](T::Trainer&) {}, "late"));
  }, "extender"));
  expect_error<ValueError>([&] { s.trainer->run(); }, {"while the trainer runs"});
  expect_error<ValueError>([&] { T::Trainer(nullptr, {1, "epoch"}); }, {"updater"});
  expect_error<ValueError>([&] { T::Trainer(s.updater, T::Trigger()); }, {"stop trigger"});
  expect_error<ValueError>([&] { s.trainer->extend(nullptr); }, {"extension"});
  expect_error<IOError>([&] {
    write_bytes(dir / "file", {1});
    T::Trainer(s.updater, {1, "epoch"}, dir / "file").run();
  }, {"output directory", "file"});
}

TEST_CASE("elapsed_time accumulates over runs and is restored from a snapshot") {
  TempDir dir;
  Setup s = make_setup(dir / "out", {2, "iteration"});
  s.trainer->run();
  const double first = s.trainer->elapsed_time();
  CHECK(first > 0);
  CHECK(s.trainer->elapsed_time() == first);  // the clock stops between runs
  serializers::save_npz(dir / "trainer.npz", *s.trainer);
  Setup fresh = make_setup(dir / "out", {2, "iteration"});
  serializers::load_npz(dir / "trainer.npz", *fresh.trainer);
  CHECK(fresh.trainer->elapsed_time() == first);
  CHECK(fresh.updater->iteration() == 2);
}

TEST_CASE("memory does not creep: the MLP's second and third epochs hold no more than its first") {
  // 1200 random 784-pixel examples, batches of 100, MomentumSGD, 3 epochs; at each epoch's end the
  // host pool's peak and held bytes and the process's resident memory.
  const int64_t n = 1200;
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) labels[static_cast<size_t>(i)] = static_cast<int32_t>(i % 10);
  auto data = std::make_shared<D::TupleDataset>(
      std::vector<Array>{Array::uniform({n, 784}, 0, 1, 3), Array::from_vector(labels, {n})});
  auto model = std::make_shared<L::Classifier>(std::make_shared<L::models::MLP>(1000, 10));
  auto optimizer = std::make_shared<optimizers::MomentumSGD>(0.01);
  optimizer->setup(model);
  auto updater = std::make_shared<T::StandardUpdater>(std::make_shared<D::SerialIterator>(data, 100), optimizer,
                                                      T::supervised_loss(model));
  TempDir dir;
  T::Trainer trainer(updater, {3, "epoch"}, dir / "out");
  struct Memory {
    int64_t peak_held, held, resident;
  };
  std::vector<Memory> at_epoch_end;
  trainer.extend(T::make_extension(
      [&](T::Trainer&) {
        const AllocatorStats stats = allocator_for(DeviceType::cpu).stats();
        at_epoch_end.push_back({stats.peak_bytes_held, stats.bytes_in_use + stats.bytes_cached, resident_bytes()});
      },
      "memory", {1, "epoch"}));
  trainer.run();
  REQUIRE(at_epoch_end.size() == 3);
  const Memory& first = at_epoch_end[0];
  for (size_t epoch = 1; epoch < at_epoch_end.size(); ++epoch) {
    INFO("epoch ", epoch + 1, " against the first: peak held ", at_epoch_end[epoch].peak_held, " / ", first.peak_held,
         ", held ", at_epoch_end[epoch].held, " / ", first.held, ", resident ", at_epoch_end[epoch].resident, " / ",
         first.resident);
    CHECK(at_epoch_end[epoch].peak_held <= first.peak_held * 102 / 100);
    CHECK(at_epoch_end[epoch].held <= first.held * 102 / 100);
    if (!kAddressSanitizer) CHECK(at_epoch_end[epoch].resident <= first.resident * 102 / 100);
  }
}
