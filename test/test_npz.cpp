#include "testing.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <sys/resource.h>
#include <unistd.h>

using namespace kusari;
using namespace kusari::testing;
using namespace kusari::serializers;
namespace fs = std::filesystem;

namespace {

// y = x * scale + shift over a feature axis of size n, counting its calls.
class Affine : public L::Cloneable<Affine, L::Link> {
 public:
  explicit Affine(int64_t n) {
    add_param("scale", Array::ones({n}));
    add_param("shift", Array::zeros({n}));
    add_persistent("calls", Array::zeros({}, Dtype::int64));
  }
};

// Two Affine children; the second's size can differ, to provoke shape mismatches.
class Net : public L::Cloneable<Net, L::Chain> {
 public:
  std::shared_ptr<Affine> first = std::make_shared<Affine>(3);
  std::shared_ptr<Affine> second;
  explicit Net(int64_t second_size = 3) : second(std::make_shared<Affine>(second_size)) {
    add_link("first", first);
    add_link("second", second);
  }
};

// A link whose weight gets its shape at the first forward and whose statistics may be undefined.
class Lazy : public L::Link {
 public:
  Lazy() {
    add_uninitialized_param("W", nullptr);
    add_persistent("stats", Array());
  }
};


std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// A Python interpreter that can import NumPy (KUSARI_PYTHON, python3 on the PATH, /usr/bin/python3).
const std::optional<std::string>& python_with_numpy() {
  static const std::optional<std::string> found = []() -> std::optional<std::string> {
    std::vector<std::string> candidates;
    if (const char* chosen = std::getenv("KUSARI_PYTHON")) candidates.emplace_back(chosen);
    candidates.emplace_back("python3");
    candidates.emplace_back("/usr/bin/python3");
    for (const std::string& python : candidates) {
      if (std::system(cat(python, " -c \"import numpy\" >/dev/null 2>&1").c_str()) == 0) return python;
    }
    return std::nullopt;
  }();
  return found;
}

// Runs `script` with NumPy available and checks that it succeeds; false (with a message) when no Python
// with NumPy is found.
bool run_python(const TempDir& dir, const std::string& script) {
  const auto& python = python_with_numpy();
  if (!python) {
    skip_case("no python3 that can import numpy (set KUSARI_PYTHON to choose one)");
    return false;
  }
  write_file(dir / "check.py", "import numpy as np\n" + script);
  const int status = std::system(cat(*python, " '", dir / "check.py", "' > '", dir / "check.log", "' 2>&1").c_str());
  INFO("python output:\n", read_file(dir / "check.log"));
  CHECK(status == 0);
  return true;
}

// Every dtype with small non-negative values (exactly representable in each).
std::vector<Array> arrays_of_every_dtype() {
  std::vector<Array> out;
  uint64_t seed = 1;
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::bfloat16, Dtype::float64, Dtype::int32, Dtype::int64,
                      Dtype::uint8, Dtype::bool_}) {
    out.push_back(random({2, 3}, seed++, Dtype::float64, 0, 5).astype(dtype));
  }
  return out;
}

void expect_same(const Array& loaded, const Array& original) {
  REQUIRE(loaded.defined());
  CHECK(loaded.dtype() == original.dtype());
  CHECK(loaded.shape() == original.shape());
  CHECK(loaded.to_vector<double>() == original.to_vector<double>());
}

// Sets every parameter and persistent value of a Net to distinct values.
void fill_distinct(Net& net) {
  double value = 1;
  for (auto& [name, param] : net.namedparams()) {
    param.data().assign(Array::arange(value, value + param.size()).reshape(param.shape()));
    value += 10;
  }
  net.first->persistent("calls").fill(4);
  net.second->persistent("calls").fill(5);
}

// The values of every parameter and persistent value of a Net, in order.
std::vector<double> state_of(const Net& net) {
  std::vector<double> out;
  for (const auto& [name, param] : net.namedparams()) {
    for (double v : param.data().to_vector<double>()) out.push_back(v);
  }
  out.push_back(net.first->persistent("calls").item<double>());
  out.push_back(net.second->persistent("calls").item<double>());
  return out;
}

}  // namespace

TEST_CASE(".npy bytes round-trip every dtype, 0-d and empty arrays, with 64-byte aligned headers") {
  for (const Array& a : arrays_of_every_dtype()) {
    INFO("dtype ", a.dtype());
    const std::string bytes = to_npy(a);
    CHECK((bytes.find('\n') + 1) % 64 == 0);
    CHECK(bytes.find(cat("'descr': '", npy_descr(a.dtype()), "'")) != std::string::npos);
    const std::optional<Dtype> stored_as =
        a.dtype() == Dtype::bfloat16 ? std::optional<Dtype>(Dtype::bfloat16) : std::nullopt;
    expect_same(from_npy(bytes, "test", stored_as), a);
  }
  CHECK(npy_descr(Dtype::bfloat16) == "<u2");
  expect_same(from_npy(to_npy(Array::scalar(2.5, Dtype::float64)), "test"), Array::scalar(2.5, Dtype::float64));
  expect_same(from_npy(to_npy(Array::zeros({0, 3})), "test"), Array::zeros({0, 3}));
  const Array view = Array::arange(0, 6).reshape({2, 3}).transpose();
  expect_same(from_npy(to_npy(view), "test"), view.copy());
  CHECK(text_from_npy(text_to_npy("bfloat16"), "test") == "bfloat16");
}

TEST_CASE("malformed .npy bytes throw IOError naming the source and the problem") {
  expect_error<IOError>([] { from_npy("hello world", "x.npy"); }, {"x.npy", "magic", "hello "});
  std::string bytes = to_npy(Array::ones({4}));
  expect_error<IOError>([&] { from_npy(bytes.substr(0, bytes.size() - 1), "x.npy"); },
                        {"x.npy", "expected 16 bytes", "found 15"});
  expect_error<IOError>([&] { from_npy(bytes.substr(0, 20), "x.npy"); }, {"x.npy", "truncated"});
  std::string complex = bytes;
  complex.replace(complex.find("<f4"), 3, "<c8");
  expect_error<IOError>([&] { from_npy(complex, "x.npy"); }, {"unsupported NumPy dtype '<c8'"});
  std::string bad_shape = bytes;
  bad_shape.replace(bad_shape.find("(4,)"), 4, "(a,)");
  expect_error<IOError>([&] { from_npy(bad_shape, "x.npy"); }, {"malformed .npy header", "integer"});
  expect_error<IOError>([&] { from_npy(bytes, "x.npy", Dtype::float64); }, {"8 bytes", "'<f4'"});
  // A bool element is one byte, 0 or 1: any other (found by fuzzing) would be an invalid bool in memory.
  std::string bools = to_npy(Array::zeros({3}, Dtype::bool_));
  bools.back() = '\xff';
  expect_error<IOError>([&] { from_npy(bools, "b.npy"); }, {"b.npy", "byte 0 or 1", "found 255 at element 2"});
}

TEST_CASE("save_npz and load_npz round-trip every dtype and both scalar kinds, stored and deflated") {
  TempDir dir;
  for (bool compress : {false, true}) {
    INFO("compress ", compress);
    const std::string path = dir / (compress ? "deflated.npz" : "stored.npz");
    std::vector<Array> arrays = arrays_of_every_dtype();
    double lr = 0.125;
    int64_t step = -42;
    save_npz(path, [&](Serializer& s) {
      for (size_t i = 0; i < arrays.size(); ++i) s["arrays"](std::to_string(i), arrays[i]);
      s["optimizer"]("lr", lr);
      s["optimizer"]("t", step);
    }, compress);
    std::vector<Array> loaded(arrays.size());
    double lr_loaded = 0;
    int64_t step_loaded = 0;
    load_npz(path, [&](Serializer& s) {
      CHECK(s.is_loading());
      for (size_t i = 0; i < loaded.size(); ++i) s["arrays"](std::to_string(i), loaded[i]);
      s["optimizer"]("lr", lr_loaded);
      s["optimizer"]("t", step_loaded);
    });
    for (size_t i = 0; i < arrays.size(); ++i) expect_same(loaded[i], arrays[i]);
    CHECK(lr_loaded == 0.125);
    CHECK(step_loaded == -42);
  }
}

TEST_CASE("keys follow Chainer's layout and the archive is deterministic") {
  TempDir dir;
  Array w = Array::ones({2});
  auto visit = [&](Serializer& s) { s["predictor"]["conv1"]("W", w); };
  save_npz(dir / "a.npz", visit);
  save_npz(dir / "b.npz", visit);
  CHECK(ZipReader(dir / "a.npz").names() == std::vector<std::string>{"predictor/conv1/W.npy"});
  CHECK(read_file(dir / "a.npz") == read_file(dir / "b.npz"));
}

TEST_CASE("a Chain of links round-trips its parameters and persistent values") {
  TempDir dir;
  Net net;
  fill_distinct(net);
  save_npz(dir / "net.npz", net);
  CHECK(ZipReader(dir / "net.npz").names() ==
        std::vector<std::string>{"first/calls.npy", "first/scale.npy", "first/shift.npy", "second/calls.npy",
                                 "second/scale.npy", "second/shift.npy"});
  Net fresh;
  CHECK(state_of(fresh) != state_of(net));
  load_npz(dir / "net.npz", fresh);
  CHECK(state_of(fresh) == state_of(net));
  CHECK(fresh.first->persistent("calls").dtype() == Dtype::int64);

  // A defined target keeps its dtype: a float16 model loads float32 values.
  Net half;
  for (auto& [name, param] : half.namedparams()) param.set_data(param.data().astype(Dtype::float16));
  load_npz(dir / "net.npz", half);
  CHECK(half.first->param("scale").dtype() == Dtype::float16);
  CHECK(state_of(half) == state_of(net));
}

TEST_CASE("uninitialised parameters take the stored shape; undefined persistent values round-trip") {
  TempDir dir;
  Lazy source;
  source.initialize_param("W", {2, 2}).data().fill(3.0);
  save_npz(dir / "lazy.npz", source);
  Lazy target;
  target.persistent("stats") = Array::ones({3});
  load_npz(dir / "lazy.npz", target);
  REQUIRE(target.is_initialized("W"));
  expect_values(target.param("W").data(), {3, 3, 3, 3});
  CHECK_FALSE(target.persistent("stats").defined());

  // A link saved before its lazy parameter had a shape stores it as undefined: a strict load finds the
  // key and leaves the parameter uninitialised.
  Lazy blank;
  save_npz(dir / "blank.npz", blank);
  Lazy other;
  load_npz(dir / "blank.npz", other);
  CHECK_FALSE(other.is_initialized("W"));
}

TEST_CASE("load_npz with a prefix loads one part of a larger archive") {
  TempDir dir;
  Net net;
  fill_distinct(net);
  int64_t iteration = 7;
  save_npz(dir / "snapshot.npz", [&](Serializer& s) {
    net.serialize(s["updater"]["model:main"]);
    s("iteration", iteration);
  });
  Net fresh;
  load_npz(dir / "snapshot.npz", fresh, true, "updater/model:main/");
  CHECK(state_of(fresh) == state_of(net));
}

TEST_CASE("NumPy opens kusari's archives and sees the keys, dtypes, shapes and values") {
  TempDir dir;
  Array W = Array::arange(0, 6).reshape({2, 3});
  Array half = Array::from_vector<double>({0.5, -1.5}, {2}, Dtype::float16);
  Array bf = Array::from_vector<double>({1, -2, 0.5}, {3}, Dtype::bfloat16);
  Array i32 = Array::from_vector<int32_t>({-1, 0, 1}, {3});
  Array u8 = Array::from_vector<uint8_t>({0, 255, 7}, {3});
  Array mask = Array::from_vector<bool>({true, false, true}, {3});
  Array empty = Array::zeros({0, 3}, Dtype::float64);
  double lr = 0.125;
  int64_t t = 42;
  for (bool compress : {false, true}) {
    const std::string path = dir / (compress ? "ours_deflated.npz" : "ours.npz");
    save_npz(path, [&](Serializer& s) {
      s["predictor"]["conv1"]("W", W);
      s("half", half);
      s("bf", bf);
      s("i32", i32);
      s("u8", u8);
      s("mask", mask);
      s("empty", empty);
      s["opt"]("lr", lr);
      s["opt"]("t", t);
    }, compress);
    run_python(dir, cat("z = np.load(r'", path, "')\n", R"(
assert sorted(z.files) == sorted(['predictor/conv1/W', 'half', 'bf', 'bf.__kusari_dtype__', 'i32', 'u8', 'mask',
                                  'empty', 'opt/lr', 'opt/t']), z.files
def same(key, expected):
    got = z[key]
    assert got.dtype == expected.dtype and got.shape == expected.shape, (key, got.dtype, got.shape)
    assert np.array_equal(got, expected), (key, got)
same('predictor/conv1/W', np.arange(6, dtype=np.float32).reshape(2, 3))
same('half', np.array([0.5, -1.5], np.float16))
same('i32', np.array([-1, 0, 1], np.int32))
same('u8', np.array([0, 255, 7], np.uint8))
same('mask', np.array([True, False, True]))
same('empty', np.zeros((0, 3)))
same('opt/lr', np.array(0.125))
same('opt/t', np.array(42, np.int64))
assert z['bf'].dtype == np.uint16
assert np.array_equal((z['bf'].astype(np.uint32) << 16).view(np.float32), np.array([1, -2, 0.5], np.float32))
assert z['bf.__kusari_dtype__'][()] == b'bfloat16'
)"));
  }
}

TEST_CASE("archives written by numpy.savez and numpy.savez_compressed load") {
  TempDir dir;
  const bool ran = run_python(dir, cat(R"(
arrays = {'a/W': np.arange(6, dtype=np.float32).reshape(2, 3), 'f16': np.array([0.5, -1.5], np.float16),
          'i32': np.array([-3, 4], np.int32), 'i64': np.array([[1 << 40]]), 'u8': np.array([0, 200], np.uint8),
          'b': np.array([True, False]), 'fortran': np.asfortranarray(np.arange(6.0).reshape(2, 3)),
          'big_endian': np.arange(4, dtype='>i4'), 'lr': np.float64(0.25), 't': np.int64(9),
          'large': np.arange(300000) % 7 * 0.5}
np.savez(r')", dir / "plain.npz", R"(', **arrays)
np.savez_compressed(r')", dir / "compressed.npz", R"(', **arrays)
)"));
  if (!ran) return;
  for (const char* name : {"plain.npz", "compressed.npz"}) {
    INFO(name);
    Array W, f16, i32, i64, u8, b, fortran, big_endian, large;
    double lr = 0;
    int64_t t = 0;
    load_npz(dir / name, [&](Serializer& s) {
      s["a"]("W", W);
      s("f16", f16);
      s("i32", i32);
      s("i64", i64);
      s("u8", u8);
      s("b", b);
      s("fortran", fortran);
      s("big_endian", big_endian);
      s("large", large);
      s("lr", lr);
      s("t", t);
    });
    expect_same(W, Array::arange(0, 6).reshape({2, 3}));
    expect_same(f16, Array::from_vector<double>({0.5, -1.5}, {2}, Dtype::float16));
    expect_same(i32, Array::from_vector<int32_t>({-3, 4}, {2}));
    expect_same(i64, Array::from_vector<int64_t>({int64_t{1} << 40}, {1, 1}));
    expect_same(u8, Array::from_vector<uint8_t>({0, 200}, {2}));
    expect_same(b, Array::from_vector<bool>({true, false}, {2}));
    expect_same(fortran, Array::arange(0, 6, 1, Dtype::float64).reshape({2, 3}));
    expect_same(big_endian, Array::arange(0, 4, 1, Dtype::int32));
    REQUIRE(large.size() == 300000);
    const std::vector<double> values = large.to_vector<double>();
    CHECK(values[299999] == (299999 % 7) * 0.5);
    CHECK(lr == 0.25);
    CHECK(t == 9);
  }
}

TEST_CASE("ZIP64 archives are written on request and read back, by kusari and by Python") {
  TempDir dir;
  const std::string path = dir / "zip64.npz";
  ZipWriter zip(path, true);
  zip.add("a.npy", to_npy(Array::arange(0, 5)));
  zip.add("b.npy", to_npy(Array::ones({100}, Dtype::int64)), true);
  zip.finish();
  ZipReader reader(path);
  CHECK(reader.names() == std::vector<std::string>{"a.npy", "b.npy"});
  expect_same(from_npy(reader.read("b.npy"), "b"), Array::ones({100}, Dtype::int64));
  Array a;
  load_npz(path, [&](Serializer& s) { s("a", a); });
  expect_same(a, Array::arange(0, 5));
  run_python(dir, cat("import zipfile\nassert zipfile.ZipFile(r'", path, "').testzip() is None\n",
                      "assert np.load(r'", path, "')['b'].sum() == 100\n"));
}

TEST_CASE("a missing key throws when strict and is skipped otherwise") {
  TempDir dir;
  Array a = Array::ones({2});
  save_npz(dir / "one.npz", [&](Serializer& s) { s("a", a); });
  Array b = Array::zeros({2});
  const std::string path = dir / "one.npz";
  expect_error<ValueError>([&] { load_npz(path, [&](Serializer& s) { s["group"]("b", b); }); },
                           {"'group/b'", path, "not found"});
  load_npz(path, [&](Serializer& s) { s["group"]("b", b); }, false);
  expect_values(b, {0, 0});
}

TEST_CASE("errors leave the target untouched: missing keys and shape mismatches are found before assigning") {
  TempDir dir;
  Net saved;
  fill_distinct(saved);
  save_npz(dir / "net.npz", saved);

  Net wider(4);  // "first" matches, "second" does not; "first" is visited first
  const std::vector<double> before = state_of(wider);
  expect_error<ShapeError>([&] { load_npz(dir / "net.npz", wider); },
                           {"second/scale", dir / "net.npz", "(4,)", "(3,)"});
  CHECK(state_of(wider) == before);

  save_npz(dir / "first_only.npz", [&](Serializer& s) { saved.first->serialize(s["first"]); });
  Net target;
  const std::vector<double> target_before = state_of(target);
  expect_error<ValueError>([&] { load_npz(dir / "first_only.npz", target); }, {"'second/scale'", "not found"});
  CHECK(state_of(target) == target_before);

  double scalar = 1;
  expect_error<ShapeError>([&] { load_npz(dir / "net.npz", [&](Serializer& s) { s["first"]("scale", scalar); }); },
                           {"first/scale", "expected a scalar", "(3,)"});
  CHECK(scalar == 1);
}

TEST_CASE("truncated, corrupt and foreign files throw IOError naming the file and the problem") {
  TempDir dir;
  Array big = Array::arange(0, 1000, 1, Dtype::float64);
  const std::string good = dir / "good.npz";
  save_npz(good, [&](Serializer& s) { s("x", big); });
  const std::string bytes = read_file(good);
  Array target = Array::zeros({1000}, Dtype::float64);
  auto load = [&](const std::string& path) { load_npz(path, [&](Serializer& s) { s("x", target); }); };

  for (size_t size : {size_t{0}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    INFO("truncated to ", size, " bytes");
    const std::string path = dir / "truncated.npz";
    write_file(path, bytes.substr(0, size));
    expect_error<IOError>([&] { load(path); }, {path, "truncated"});
  }
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  write_file(dir / "flipped.npz", flipped);
  expect_error<IOError>([&] { load(dir / "flipped.npz"); }, {dir / "flipped.npz", "'x.npy'", "CRC-32"});

  save_npz(dir / "deflated.npz", [&](Serializer& s) { s("x", big); }, true);
  std::string deflated = read_file(dir / "deflated.npz");
  deflated[deflated.size() / 3] ^= 0x55;
  write_file(dir / "deflated_bad.npz", deflated);
  expect_error<IOError>([&] { load(dir / "deflated_bad.npz"); }, {dir / "deflated_bad.npz", "'x.npy'", "corrupt"});

  write_file(dir / "text.npz", "this is not a zip archive, just some text that is long enough");
  expect_error<IOError>([&] { load(dir / "text.npz"); }, {dir / "text.npz", "not a zip archive"});

  ZipWriter zip(dir / "bad_magic.npz");
  zip.add("x.npy", "NUMPY? no, garbage");
  zip.finish();
  expect_error<IOError>([&] { load(dir / "bad_magic.npz"); }, {dir / "bad_magic.npz", "'x.npy'", "magic"});

  expect_error<IOError>([&] { load(dir / "absent.npz"); }, {"cannot open", dir / "absent.npz"});
  expect_values(target, std::vector<double>(1000, 0.0));
}

TEST_CASE("saving a key twice throws") {
  TempDir dir;
  Array a = Array::ones({1});
  expect_error<ValueError>([&] { save_npz(dir / "twice.npz", [&](Serializer& s) { s("a", a), s("a", a); }); },
                           {"'a'", "twice"});
  CHECK(dir.list().empty());
}

TEST_CASE("a failed save leaves no file, no temporary file, and any previous file intact") {
  TempDir dir;
  Array a = Array::ones({4});
  auto visit = [&](Serializer& s) { s("a", a); };

  const std::string missing_dir = dir / "no/such/dir/model.npz";
  expect_error<IOError>([&] { save_npz(missing_dir, visit); }, {missing_dir, "No such file or directory"});
  CHECK(dir.list().empty());

  fs::create_directory(dir / "occupied.npz");
  expect_error<IOError>([&] { save_npz(dir / "occupied.npz", visit); }, {dir / "occupied.npz", "renaming"});
  CHECK(fs::is_directory(dir / "occupied.npz"));
  CHECK(dir.list() == std::vector<std::string>{"occupied.npz"});

  const std::string path = dir / "model.npz";
  save_npz(path, visit);
  const std::string before = read_file(path);
  {
    // Files may not grow past 4 KiB while this guard lives, so the write fails midway (EFBIG).
    struct FileSizeLimit {
      rlimit saved{};
      void (*handler)(int);
      FileSizeLimit() : handler(std::signal(SIGXFSZ, SIG_IGN)) {
        ::getrlimit(RLIMIT_FSIZE, &saved);
        rlimit limited = saved;
        limited.rlim_cur = 4096;
        ::setrlimit(RLIMIT_FSIZE, &limited);
      }
      ~FileSizeLimit() {
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, handler);
      }
    } limit;
    Array big = Array::ones({100000});
    expect_error<IOError>([&] { save_npz(path, [&](Serializer& s) { s("a", big); }); }, {path, "writing"});
  }
  CHECK(read_file(path) == before);
  CHECK(dir.list() == std::vector<std::string>{"model.npz", "occupied.npz"});
}

TEST_CASE("a save into a read-only directory fails naming the file and leaves the directory empty") {
  if (::geteuid() == 0) {
    skip_case("running as root, which may write anywhere");
    return;
  }
  TempDir dir;
  Array a = Array::ones({4});
  auto visit = [&](Serializer& s) { s("a", a); };
  fs::create_directory(dir / "locked");
  fs::permissions(dir / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  expect_error<IOError>([&] { save_npz(dir / "locked/model.npz", visit); }, {dir / "locked/model.npz"});
  CHECK(fs::is_empty(dir / "locked"));
}

TEST_CASE("an AtomicFile dropped before commit leaves nothing behind") {
  TempDir dir;
  {
    AtomicFile file(dir / "partial.bin");
    file.write("some bytes");
    CHECK(file.size() == 10);
    CHECK(dir.list().size() == 1);  // the temporary file
  }
  CHECK(dir.list().empty());
}

TEST_CASE("every truncation and every flipped byte of an archive gives a kusari error or a clean load") {
  TempDir dir;
  Array a = Array::arange(0, 8, 1, Dtype::int64);
  double s = 0.5;
  for (bool compress : {false, true}) {
    save_npz(dir / "small.npz", [&](Serializer& ser) { ser["g"]("a", a), ser("s", s); }, compress);
    const std::string bytes = read_file(dir / "small.npz");
    size_t failures = 0;
    auto try_load = [&](const std::string& content) {
      write_file(dir / "damaged.npz", content);
      Array loaded;
      double scalar = 0;
      try {
        load_npz(dir / "damaged.npz", [&](Serializer& ser) { ser["g"]("a", loaded), ser("s", scalar); });
      } catch (const Error&) {
        ++failures;
      }
    };
    for (size_t size = 0; size < bytes.size(); ++size) try_load(bytes.substr(0, size));
    for (size_t pos = 0; pos < bytes.size(); ++pos) {
      std::string flipped = bytes;
      flipped[pos] = static_cast<char>(~flipped[pos]);
      try_load(flipped);
    }
    CHECK(failures >= bytes.size());  // every truncation fails, and most flips
  }
}

TEST_CASE("DictSerializer and DictDeserializer round-trip a walk through bytes, every dtype included") {
  Net net;
  fill_distinct(net);
  Array half = Array::from_vector<float>({1.5f, -2}, {2}).astype(Dtype::bfloat16);
  Array undefined;
  double rate = 0.25;
  int64_t step = -3;
  const SerializeFunction walk = [&](Serializer& s) {
    net.serialize(s["model"]);
    s["extra"]("half", half);
    s["extra"]("undefined", undefined);
    s("rate", rate);
    s("step", step);
  };
  DictSerializer saved;
  walk(saved);
  CHECK(saved.values().size() == 10);
  CHECK(saved.values().at("model/first/scale").shape() == Shape{3});
  const std::string bytes = pack_array_dict(saved.values());
  const ArrayDict unpacked = unpack_array_dict(bytes, "test bytes");
  CHECK(unpacked.at("extra/half").dtype() == Dtype::bfloat16);
  CHECK_FALSE(unpacked.at("extra/undefined").defined());

  Net fresh;
  Array half_back, undefined_back = Array::ones({1});
  double rate_back = 0;
  int64_t step_back = 0;
  DictDeserializer loader(unpacked);
  fresh.serialize(loader["model"]);
  loader["extra"]("half", half_back);
  loader["extra"]("undefined", undefined_back);
  loader("rate", rate_back);
  loader("step", step_back);
  CHECK(state_of(fresh) == state_of(net));
  CHECK(half_back.dtype() == Dtype::bfloat16);
  expect_values(half_back.astype(Dtype::float64), {1.5, -2});
  CHECK_FALSE(undefined_back.defined());
  CHECK(rate_back == 0.25);
  CHECK(step_back == -3);

  // Values recorded are copies: later changes to the source do not leak into the dict.
  net.first->param("scale").data().fill(100);
  CHECK(saved.values().at("model/first/scale").to_vector<double>() == std::vector<double>{1, 2, 3});
}

TEST_CASE("DictDeserializer and unpack_array_dict name what is missing, mismatched or malformed") {
  DictSerializer saved;
  Array row = Array::zeros({2});
  int64_t count = 4;
  saved("row", row);
  saved("count", count);
  expect_error<ValueError>([&] { saved("count", count); }, {"'count' is saved twice"});
  DictDeserializer loader(saved.values());
  Array wrong = Array::zeros({3});
  expect_error<ShapeError>([&] { loader("row", wrong); }, {"'row'", "(3,)", "(2,)"});
  double scalar = 0;
  expect_error<ShapeError>([&] { loader("row", scalar); }, {"expected a scalar", "shape (2,)"});
  expect_error<ValueError>([&] { loader["sub"]("row", row); }, {"'sub/row' not found"});
  const std::string bytes = pack_array_dict(saved.values());
  expect_error<IOError>([&] { unpack_array_dict(bytes.substr(0, bytes.size() - 3), "the message"); },
                        {"the message", "truncated"});
  expect_error<IOError>([&] { unpack_array_dict(bytes + "x", "the message"); }, {"1 bytes follow the last entry"});
}

TEST_CASE("FilteredSerializer passes on only the accepted keys, when saving and when loading") {
  TempDir dir;
  Net net;
  fill_distinct(net);
  const KeyPredicate second_only = [](const std::string& key) { return key.starts_with("model/second/"); };
  save_npz(dir / "part.npz", [&](Serializer& s) {
    FilteredSerializer filtered(s, second_only);
    net.serialize(filtered["model"]);
  });
  CHECK(ZipReader(dir / "part.npz").names() ==
        std::vector<std::string>{"model/second/calls.npy", "model/second/scale.npy", "model/second/shift.npy"});

  save_npz(dir / "all.npz", [&](Serializer& s) { net.serialize(s["model"]); });
  Net fresh;
  load_npz(dir / "all.npz", [&](Serializer& s) {
    FilteredSerializer filtered(s, second_only);
    CHECK(filtered.is_loading());
    fresh.serialize(filtered["model"]);
  });
  CHECK(fresh.second->param("scale").data().to_vector<double>() == net.second->param("scale").data().to_vector<double>());
  CHECK(fresh.first->param("scale").data().to_vector<double>() == std::vector<double>{1, 1, 1});
  DictSerializer sink;
  expect_error<ValueError>([&] { FilteredSerializer(sink, KeyPredicate()); }, {"expected a key predicate"});
}
