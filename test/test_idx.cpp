#include "testing.h"

#include <chrono>
#include <filesystem>

#include <zlib.h>

using namespace kusari;
using namespace kusari::testing;
namespace D = kusari::data;

namespace {

// IDX bytes: magic 00 00 type ndim, big-endian extents, then `items` as they are.
std::vector<uint8_t> idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& items) {
  std::vector<uint8_t> bytes{0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(d >> shift));
  }
  bytes.insert(bytes.end(), items.begin(), items.end());
  return bytes;
}

// `bytes` compressed as one gzip member.
std::vector<uint8_t> gzip(const std::vector<uint8_t>& bytes) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<uint8_t> out(deflateBound(&z, bytes.size()));
  z.next_in = const_cast<Bytef*>(bytes.data());
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Three 2 x 3 images with pixel values 0, 1, ..., 17 scaled by 15, and labels 7, 0, 255.
std::vector<uint8_t> pixels() {
  std::vector<uint8_t> p;
  for (int i = 0; i < 18; ++i) p.push_back(static_cast<uint8_t>(15 * i));
  return p;
}
const std::vector<uint8_t> kLabels{7, 0, 255};

std::vector<uint8_t> image_file() { return idx_bytes(0x08, {3, 2, 3}, pixels()); }
std::vector<uint8_t> label_file() { return idx_bytes(0x08, {3}, kLabels); }

void check_small_dataset(const D::TupleDataset& dataset) {
  REQUIRE(dataset.size() == 3);
  const Array& x = dataset.arrays()[0];
  const Array& y = dataset.arrays()[1];
  CHECK(x.shape() == Shape{3, 1, 2, 3});
  CHECK(x.dtype() == Dtype::float32);
  std::vector<double> expected;
  for (uint8_t p : pixels()) expected.push_back(p / 255.0);
  expect_values(x, expected);
  CHECK(y.dtype() == Dtype::int32);
  CHECK(y.to_vector<int>() == std::vector<int>{7, 0, 255});
}

}  // namespace

TEST_CASE("idx reads plain and gzip files into scaled float32 images and int32 labels") {
  TempDir dir;
  write_bytes(dir.file("images"), image_file());
  write_bytes(dir.file("labels"), label_file());
  check_small_dataset(*D::idx(dir.file("images"), dir.file("labels")));
  write_bytes(dir.file("images.gz"), gzip(image_file()));
  write_bytes(dir.file("labels.gz"), gzip(label_file()));
  check_small_dataset(*D::idx(dir.file("images.gz"), dir.file("labels.gz")));
  // Mixed: gzip is detected by its magic bytes, not by the file name.
  write_bytes(dir.file("images.bin"), gzip(image_file()));
  check_small_dataset(*D::idx(dir.file("images.bin"), dir.file("labels")));
}

TEST_CASE("idx flattens images on request") {
  TempDir dir;
  write_bytes(dir.file("images"), image_file());
  write_bytes(dir.file("labels"), label_file());
  auto dataset = D::idx(dir.file("images"), dir.file("labels"), {.flatten = true});
  CHECK(dataset->arrays()[0].shape() == Shape{3, 6});
  CHECK(dataset->get(1)[0].shape() == Shape{6});
  CHECK(dataset->get(1)[0].to_vector<float>()[0] == doctest::Approx(90 / 255.0));
}

TEST_CASE("mnist finds the standard file names in a directory, compressed or not") {
  TempDir dir;
  write_bytes(dir.file("t10k-images-idx3-ubyte.gz"), gzip(image_file()));
  write_bytes(dir.file("t10k-labels-idx1-ubyte"), label_file());
  check_small_dataset(*D::mnist(dir.path(), false));
  expect_error<IOError>([&] { D::mnist(dir.path(), true); }, {"train-images-idx3-ubyte", "cannot open"});
}

TEST_CASE("read_idx converts big-endian items of every type") {
  TempDir dir;
  write_bytes(dir.file("i16"), idx_bytes(0x0B, {2}, {0x01, 0x02, 0xff, 0xfe}));
  const Array a = D::read_idx(dir.file("i16"));
  CHECK(a.dtype() == Dtype::int32);
  CHECK(a.to_vector<int>() == std::vector<int>{258, -2});
  write_bytes(dir.file("f32"), idx_bytes(0x0D, {1, 1}, {0x3f, 0xc0, 0x00, 0x00}));
  const Array b = D::read_idx(dir.file("f32"));
  CHECK(b.dtype() == Dtype::float32);
  CHECK(b.shape() == Shape{1, 1});
  CHECK(b.item<float>() == 1.5f);
  write_bytes(dir.file("f64"), idx_bytes(0x0E, {1}, {0xc0, 0x04, 0, 0, 0, 0, 0, 0}));
  CHECK(D::read_idx(dir.file("f64")).item<double>() == -2.5);
  write_bytes(dir.file("i8"), idx_bytes(0x09, {2}, {0x80, 0x7f}));
  CHECK(D::read_idx(dir.file("i8")).to_vector<int>() == std::vector<int>{-128, 127});
}

TEST_CASE("truncated IDX files name the file and the byte offsets") {
  TempDir dir;
  std::vector<uint8_t> bytes = image_file();
  bytes.resize(bytes.size() - 5);
  write_bytes(dir.file("short"), bytes);
  write_bytes(dir.file("labels"), label_file());
  expect_error<IOError>([&] { D::idx(dir.file("short"), dir.file("labels")); },
                        {dir.file("short"), "truncated", "byte offset 34", "ends at 29"});
  write_bytes(dir.file("short.gz"), gzip(bytes));
  expect_error<IOError>([&] { D::idx(dir.file("short.gz"), dir.file("labels")); },
                        {dir.file("short.gz"), "byte offset 34", "ends at 29"});
  write_bytes(dir.file("header"), {0, 0, 8, 3, 0, 0, 0, 3, 0});
  expect_error<IOError>([&] { D::read_idx(dir.file("header")); },
                        {dir.file("header"), "3 axes end at byte offset 16", "ends at 9"});
  write_bytes(dir.file("huge"), idx_bytes(0x0E, {0xffffffff, 0xffffffff, 0xffffffff}, {}));
  expect_error<IOError>([&] { D::read_idx(dir.file("huge")); }, {dir.file("huge"), "too large"});
  // A zero extent empties the data, but the others still have to fit the array's strides (found by
  // test/fuzz/fuzz_idx: eleven axes, one of them 0, the others up to 2^25).
  write_bytes(dir.file("empty_huge"), idx_bytes(0x0C, {0, 1 << 25, 1 << 25, 1 << 25}, {}));
  expect_error<IOError>([&] { D::read_idx(dir.file("empty_huge")); }, {dir.file("empty_huge"), "too large"});
  write_bytes(dir.file("empty"), idx_bytes(0x08, {0, 4}, {}));
  CHECK(D::read_idx(dir.file("empty")).shape() == Shape{0, 4});
  write_bytes(dir.file("tiny"), {0, 0});
  expect_error<IOError>([&] { D::read_idx(dir.file("tiny")); }, {dir.file("tiny"), "magic", "ends at 2"});
  std::vector<uint8_t> longer = label_file();
  longer.push_back(1);
  write_bytes(dir.file("long"), longer);
  expect_error<IOError>([&] { D::read_idx(dir.file("long")); },
                        {dir.file("long"), "end at byte offset 11", "12 bytes"});
}

TEST_CASE("wrong magic numbers and item types are reported with the file and offset") {
  TempDir dir;
  write_bytes(dir.file("labels"), label_file());
  std::vector<uint8_t> bytes = image_file();
  bytes[0] = 0x12;
  write_bytes(dir.file("magic"), bytes);
  expect_error<IOError>([&] { D::idx(dir.file("magic"), dir.file("labels")); },
                        {dir.file("magic"), "byte offset 0", "0x12 0x00"});
  bytes = image_file();
  bytes[2] = 0x07;
  write_bytes(dir.file("type"), bytes);
  expect_error<IOError>([&] { D::idx(dir.file("type"), dir.file("labels")); },
                        {dir.file("type"), "0x07", "byte offset 2"});
  write_bytes(dir.file("floats"), idx_bytes(0x0D, {1, 1, 1}, {0, 0, 0, 0}));
  expect_error<DtypeError>([&] { D::idx(dir.file("floats"), dir.file("labels")); },
                           {dir.file("floats"), "unsigned byte", "byte offset 2", "float32"});
  expect_error<ShapeError>([&] { D::idx(dir.file("labels"), dir.file("labels")); },
                           {dir.file("labels"), "expected 3 axes", "got 1"});
}

TEST_CASE("image and label counts must agree") {
  TempDir dir;
  write_bytes(dir.file("images"), image_file());
  write_bytes(dir.file("labels"), idx_bytes(0x08, {2}, {1, 2}));
  expect_error<ShapeError>([&] { D::idx(dir.file("images"), dir.file("labels")); },
                           {dir.file("images"), "3 images", dir.file("labels"), "2 labels"});
}

TEST_CASE("corrupt, truncated and concatenated gzip streams") {
  TempDir dir;
  const std::vector<uint8_t> packed = gzip(image_file());
  std::vector<uint8_t> cut(packed.begin(), packed.begin() + static_cast<long>(packed.size() / 2));
  write_bytes(dir.file("cut.gz"), cut);
  expect_error<IOError>([&] { D::read_idx(dir.file("cut.gz")); },
                        {dir.file("cut.gz"), "truncated", "compressed byte offset"});
  std::vector<uint8_t> broken = packed;
  broken[3] = 0xff;  // reserved flag bits
  write_bytes(dir.file("broken.gz"), broken);
  expect_error<IOError>([&] { D::read_idx(dir.file("broken.gz")); }, {dir.file("broken.gz"), "corrupt gzip"});
  // gzip members may be concatenated: the contents are joined.
  const std::vector<uint8_t> raw = image_file();
  const std::vector<uint8_t> head(raw.begin(), raw.begin() + 10), tail(raw.begin() + 10, raw.end());
  std::vector<uint8_t> joined = gzip(head), second = gzip(tail);
  joined.insert(joined.end(), second.begin(), second.end());
  write_bytes(dir.file("joined.gz"), joined);
  CHECK(D::read_maybe_gzip(dir.file("joined.gz")) == raw);
  joined.push_back(0);
  write_bytes(dir.file("trailing.gz"), joined);
  expect_error<IOError>([&] { D::read_maybe_gzip(dir.file("trailing.gz")); }, {"after the gzip stream"});
  expect_error<IOError>([&] { D::read_file(dir.file("missing")); }, {dir.file("missing"), "cannot open"});
}

TEST_CASE("the installed Fashion-MNIST loads with 60000 training and 10000 test examples") {
  if (!std::filesystem::exists(D::kFashionMnistDir)) {
    skip_case(cat(D::kFashionMnistDir, " is absent (Debian package dataset-fashion-mnist)"));
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  auto train = D::fashion_mnist(true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("Fashion-MNIST training set loaded in ", seconds, " s");
  CHECK(train->size() == 60000);
  CHECK(train->arrays()[0].shape() == Shape{60000, 1, 28, 28});
  auto test = D::fashion_mnist(false, D::kFashionMnistDir, {.flatten = true});
  CHECK(test->size() == 10000);
  CHECK(test->arrays()[0].shape() == Shape{10000, 784});
  const Array& y = train->arrays()[1];
  CHECK(ops::amin(y).item<int>() == 0);
  CHECK(ops::amax(y).item<int>() == 9);
  CHECK(ops::amax(train->arrays()[0]).item<float>() == 1.0f);
  CHECK(ops::amin(train->arrays()[0]).item<float>() == 0.0f);
}
