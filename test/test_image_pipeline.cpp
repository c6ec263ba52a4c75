// The ImageNet pipeline: random-resized crops, the evaluation resize, luminance output, bad-image
// skipping, sharding at the list and the in-memory storage modes with their memory estimate.
#include "image_testing.h"

#include <cmath>
#include <fstream>
#include <set>
#include <thread>

using namespace kusari;
using namespace kusari::testing;
namespace D = kusari::data;

namespace {

// Writes `count` JPEG patterns of assorted sizes as img<i>.jpg, labelled 10 + i, and lists them.
struct PatternFolder {
  TempDir dir;
  std::vector<D::LabeledPath> entries;
  explicit PatternFolder(int count = 4) {
    std::ofstream list(dir.file("list.txt"));
    for (int i = 0; i < count; ++i) {
      const std::string name = "img" + std::to_string(i) + ".jpg";
      write_bytes(dir.file(name), encode_rgb(rgb_pattern(60 + 10 * i, 90 - 5 * i)));
      list << name << " " << 10 + i << "\n";
      entries.push_back({dir.file(name), 10 + i});
    }
  }
};

const D::ImageOptions kTraining{.crop_height = 32, .crop_width = 32, .random_flip = true,
                                .mean = {0.5f, 0.4f, 0.3f}, .stddev = {0.2f, 0.25f, 0.3f}, .seed = 11,
                                .random_resized_crop = true, .area_range = {0.08, 1.0},
                                .aspect_range = {3.0 / 4, 4.0 / 3}};
const D::ImageOptions kEvaluation{.crop_height = 40, .crop_width = 40, .mean = {0.5f, 0.4f, 0.3f},
                                  .stddev = {0.2f, 0.25f, 0.3f}, .resize_shorter = 48};

}  // namespace

TEST_CASE("random-resized-crop boxes keep their area and aspect in range and depend on (seed, index, epoch)") {
  const D::ImageOptions options = kTraining;
  int fallbacks = 0;
  std::set<std::vector<int64_t>> boxes;
  for (int64_t index = 0; index < 50; ++index) {
    for (int64_t epoch = 0; epoch < 20; ++epoch) {
      const D::CropBox b = D::random_resized_crop_box(375, 500, options, index, epoch);
      const D::CropBox again = D::random_resized_crop_box(375, 500, options, index, epoch);
      CHECK(std::vector<int64_t>{b.top, b.left, b.height, b.width} ==
            std::vector<int64_t>{again.top, again.left, again.height, again.width});
      boxes.insert({b.top, b.left, b.height, b.width});
      REQUIRE(b.top >= 0);
      REQUIRE(b.left >= 0);
      REQUIRE(b.top + b.height <= 375);
      REQUIRE(b.left + b.width <= 500);
      const double area = static_cast<double>(b.height * b.width) / (375.0 * 500.0);
      const double aspect = static_cast<double>(b.width) / static_cast<double>(b.height);
      if (b.height == 375 && b.width == 500) {
        ++fallbacks;
        continue;
      }
      // Rounding each side to whole pixels moves area and aspect by a few per cent at most.
      CHECK(area >= 0.08 * 0.97);
      CHECK(area <= 1.0);
      CHECK(aspect >= 0.75 * 0.97);
      CHECK(aspect <= 4.0 / 3 * 1.03);
    }
  }
  CHECK(boxes.size() > 900);
  CHECK(fallbacks < 20);
  // No try fits a 10 x 1000 strip at aspect <= 4/3 with area >= 0.5: the centred fallback clamps it.
  const D::ImageOptions strip{.crop_height = 8, .crop_width = 8, .random_resized_crop = true,
                              .area_range = {0.5, 1.0}};
  const D::CropBox b = D::random_resized_crop_box(10, 1000, strip, 3, 4);
  CHECK(b.height == 10);
  CHECK(b.width == 13);
  CHECK(b.top == 0);
  CHECK(b.left == (1000 - 13) / 2);
  D::ImageOptions other_seed = options;
  other_seed.seed = 12;
  int differ = 0;
  for (int64_t index = 0; index < 10; ++index) {
    const D::CropBox x = D::random_resized_crop_box(375, 500, options, index, 0);
    const D::CropBox y = D::random_resized_crop_box(375, 500, other_seed, index, 0);
    differ += x.top != y.top || x.height != y.height;
  }
  CHECK(differ > 5);
}

TEST_CASE("the training transform is deterministic per (index, epoch) and varies across epochs") {
  PatternFolder folder;
  D::LabeledImageDataset dataset(folder.entries, kTraining);
  std::set<std::vector<float>> seen;
  for (int64_t epoch = 0; epoch < 6; ++epoch) {
    const D::Example a = dataset.get(2, epoch), b = dataset.get(2, epoch);
    CHECK(a[0].shape() == Shape{3, 32, 32});
    CHECK(a[1].item<int>() == 12);
    CHECK(a[0].to_vector<float>() == b[0].to_vector<float>());
    seen.insert(a[0].to_vector<float>());
  }
  CHECK(seen.size() == 6);
  // Decoding at a reduced JPEG scale changes pixels only within JPEG and resampling tolerance: the
  // same plan sampled from the full-size decode.
  const std::vector<uint8_t> bytes = D::read_file(folder.entries[3].path);
  const D::Image full = D::decode_image(bytes, "img3");
  for (int64_t epoch = 0; epoch < 6; ++epoch) {
    expect_close(D::transform_image_bytes(bytes, "img3", kTraining, 3, epoch),
                 D::transform_image(full, kTraining, 3, epoch, "img3"), 0.12, 0);
  }
}

TEST_CASE("the evaluation transform resizes the shorter side and crops the centre") {
  const D::Image image = rgb_pattern(60, 96);
  // resize_shorter 48 of 60 x 96 gives 48 x 76 (76.8 truncated), then a centre crop of 40.
  CHECK(D::shorter_side_size({60, 96}, 48).width == 76);
  CHECK(D::shorter_side_size({96, 60}, 48).height == 76);
  const D::Image resized = D::resize_bilinear(image, 48, 76);
  const Array expected = D::augment_image(resized, {.crop_height = 40, .crop_width = 40, .mean = kEvaluation.mean,
                                                    .stddev = kEvaluation.stddev}, 0, 0, "p");
  const Array got = D::transform_image(image, kEvaluation, 0, 0, "p");
  CHECK(got.shape() == Shape{3, 40, 40});
  // resize_bilinear rounds to bytes; the sampler does not: half a level apart at most.
  const std::vector<float> x = got.to_vector<float>(), y = expected.to_vector<float>();
  float worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  CHECK(worst < 0.51f / 255 / 0.2f);
  // Evaluation is not random.
  CHECK(D::transform_image(image, kEvaluation, 5, 7, "p").to_vector<float>() == x);
  // A crop larger than the resized image is refused naming the file.
  expect_error<ShapeError>([&] { D::transform_image(image, {.crop_height = 50, .crop_width = 50,
                                                            .resize_shorter = 48}, 0, 0, "small.jpg"); },
                           {"small.jpg", "50 x 50", "48 x 76"});
}

TEST_CASE("channels = 1 gives the luminance as (1, H, W)") {
  D::Image gray{2, 3, {}};
  for (int i = 0; i < 6; ++i) gray.pixels.insert(gray.pixels.end(), {static_cast<uint8_t>(40 * i), 0, 0});
  const Array plain = D::augment_image(gray, {.channels = 1}, 0, 0, "g");
  CHECK(plain.shape() == Shape{1, 2, 3});
  expect_values(plain, {0, 0.299 * 40 / 255, 0.299 * 80 / 255, 0.299 * 120 / 255, 0.299 * 160 / 255,
                        0.299 * 200 / 255}, 1e-5);
  PatternFolder folder(2);
  const D::ImageOptions one{.crop_height = 20, .crop_width = 20, .mean = {0.5f, 0, 0}, .stddev = {0.5f, 1, 1},
                            .resize_shorter = 24, .channels = 1};
  D::LabeledImageDataset dataset(folder.entries, one);
  const Array x = dataset.get(1)[0];
  CHECK(x.shape() == Shape{1, 20, 20});
  D::ImageOptions three = one;
  three.channels = 3;
  three.mean = {0, 0, 0};
  three.stddev = {1, 1, 1};
  const std::vector<float> rgb = D::LabeledImageDataset(folder.entries, three).get(1)[0].to_vector<float>();
  const std::vector<float> luma = x.to_vector<float>();
  for (size_t i = 0; i < luma.size(); i += 37) {
    const float expected = 0.299f * rgb[i] + 0.587f * rgb[i + 400] + 0.114f * rgb[i + 800];
    CHECK(luma[i] == doctest::Approx((expected - 0.5f) / 0.5f).epsilon(1e-4));
  }
  expect_error<ValueError>([&] { D::LabeledImageDataset(folder.entries, {.channels = 2}); }, {"channels", "2"});
}

TEST_CASE("BadImagePolicy::skip replaces an undecodable file with the next decodable one") {
  PatternFolder folder(4);
  write_bytes(folder.entries[1].path, {'n', 'o', 't', ' ', 'a', 'n', ' ', 'i', 'm', 'a', 'g', 'e'});
  std::filesystem::remove(folder.entries[3].path);
  D::ImageOptions options = kEvaluation;
  D::LabeledImageDataset strict(folder.entries, options);
  expect_error<IOError>([&] { strict.get(1); }, {folder.entries[1].path});
  options.on_bad_image = D::BadImagePolicy::skip;
  D::LabeledImageDataset lenient(folder.entries, options);
  CHECK(lenient.get(1)[1].item<int>() == 12);
  CHECK(lenient.get(1)[0].to_vector<float>() == lenient.get(2)[0].to_vector<float>());
  CHECK(lenient.get(3)[1].item<int>() == 10);  // wraps round
  D::InMemoryLabeledImageDataset cached(folder.entries, options);
  CHECK(cached.get(1)[1].item<int>() == 12);
  CHECK(cached.get(3)[1].item<int>() == 10);
  D::InMemoryLabeledImageDataset bytes(folder.entries, options, {.storage = D::ImageStorage::compressed});
  CHECK(bytes.get(1)[1].item<int>() == 12);
  CHECK(bytes.get(3)[1].item<int>() == 10);
  expect_error<IOError>([&] { D::InMemoryLabeledImageDataset(folder.entries, kEvaluation); },
                        {folder.entries[1].path});
  std::vector<D::LabeledPath> none = {folder.entries[1], folder.entries[3]};
  D::LabeledImageDataset hopeless(none, options);
  expect_error<IOError>([&] { hopeless.get(0); }, {folder.entries[1].path, "none of"});
}

TEST_CASE("shard_entries: disjoint slices covering the list, identical on every call") {
  std::vector<D::LabeledPath> entries;
  for (int i = 0; i < 10; ++i) entries.push_back({cat("f", i), i});
  for (bool shuffle : {false, true}) {
    std::multiset<int> covered;
    for (int64_t rank = 0; rank < 3; ++rank) {
      const std::vector<D::LabeledPath> shard = D::shard_entries(entries, rank, 3, 42, shuffle, false);
      CHECK(shard.size() == (rank == 2 ? 4u : 3u));
      for (const D::LabeledPath& e : shard) covered.insert(e.label);
      const std::vector<D::LabeledPath> again = D::shard_entries(entries, rank, 3, 42, shuffle, false);
      for (size_t k = 0; k < shard.size(); ++k) CHECK(shard[k].path == again[k].path);
    }
    CHECK(covered.size() == 10);
    CHECK(std::set<int>(covered.begin(), covered.end()).size() == 10);
  }
  std::vector<int> order;
  for (int64_t rank = 0; rank < 3; ++rank) {
    for (const D::LabeledPath& e : D::shard_entries(entries, rank, 3, 42, true, false)) order.push_back(e.label);
  }
  CHECK(order != std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::set<int> equal_cover;
  for (int64_t rank = 0; rank < 4; ++rank) {
    const std::vector<D::LabeledPath> shard = D::shard_entries(entries, rank, 4, 7, true, true);
    CHECK(shard.size() == 3u);
    for (const D::LabeledPath& e : shard) equal_cover.insert(e.label);
  }
  CHECK(equal_cover.size() == 10);
  CHECK(D::shard_entries(entries, 11, 12, 0, true, false).empty() == false);
  int empty = 0;
  for (int64_t rank = 0; rank < 12; ++rank) empty += D::shard_entries(entries, rank, 12, 0, false, false).empty();
  CHECK(empty == 2);
  expect_error<ValueError>([&] { D::shard_entries(entries, 3, 3, 0, false, false); }, {"rank 3", "size 3"});
  expect_error<ValueError>([&] { D::shard_entries(entries, 0, 0, 0, false, false); }, {"size 0"});
}

TEST_CASE("a sharded in-memory data set reads only its own rank's files") {
  // Rank 1 of 3 owns entries 2 and 3 (of 6, unshuffled); the other ranks' files do not exist.
  PatternFolder folder(6);
  std::vector<D::LabeledPath> entries = folder.entries;
  for (int i : {0, 1, 4, 5}) std::filesystem::remove(entries[static_cast<size_t>(i)].path);
  const std::vector<D::LabeledPath> shard = D::shard_entries(entries, 1, 3, 0, false, false);
  REQUIRE(shard.size() == 2);
  for (D::ImageStorage storage : {D::ImageStorage::decoded, D::ImageStorage::compressed}) {
    D::InMemoryLabeledImageDataset cached(shard, kTraining, {.storage = storage, .shorter_side = 40});
    CHECK(cached.size() == 2);
    CHECK(cached.get(0)[1].item<int>() == 12);
    CHECK(cached.get(1)[1].item<int>() == 13);
    CHECK(cached.get(1)[0].shape() == Shape{3, 32, 32});
  }
  D::LabeledImageDataset streamed(shard, kTraining);
  CHECK(streamed.get(1)[1].item<int>() == 13);
}

TEST_CASE("in-memory storage: the estimate before loading, the refusal beyond it, and the examples") {
  PatternFolder folder(4);
  int64_t file_bytes = 0;
  for (const D::LabeledPath& e : folder.entries) file_bytes += static_cast<int64_t>(std::filesystem::file_size(e.path));
  const D::InMemoryOptions compressed{.storage = D::ImageStorage::compressed};
  CHECK(D::InMemoryLabeledImageDataset::estimate_bytes(folder.entries, kTraining, compressed) == file_bytes);
  // Images of 60 x 90, 70 x 85, 80 x 80, 90 x 75 at shorter side 30.
  const D::InMemoryOptions decoded{.storage = D::ImageStorage::decoded, .shorter_side = 30};
  const int64_t pixels = 30 * 45 + 30 * 36 + 30 * 30 + 36 * 30;
  CHECK(D::InMemoryLabeledImageDataset::estimate_bytes(folder.entries, kEvaluation, decoded) == 3 * pixels);
  CHECK(D::InMemoryLabeledImageDataset::estimate_bytes(folder.entries, kEvaluation, {}) ==
        3 * (60 * 90 + 70 * 85 + 80 * 80 + 90 * 75));
  D::InMemoryOptions small = decoded;
  small.available_bytes = 1000;
  expect_error<ValueError>([&] { D::InMemoryLabeledImageDataset(folder.entries, kEvaluation, small); },
                           {std::to_string(3 * pixels), "1000 bytes", "available"});
  small.available_bytes = 5000;
  small.estimated_bytes = 6000;  // the caller's own estimate is the one checked
  expect_error<ValueError>([&] { D::InMemoryLabeledImageDataset(folder.entries, kEvaluation, small); },
                           {"6000 bytes", "5000 bytes"});
  // Loading the same entries with room to spare holds what was estimated.
  D::InMemoryOptions roomy = decoded;
  roomy.available_bytes = 1 << 20;
  D::ImageOptions evaluation = kEvaluation;
  evaluation.resize_shorter = 30;
  evaluation.crop_height = evaluation.crop_width = 28;
  const D::InMemoryLabeledImageDataset pixels_held(folder.entries, evaluation, roomy);
  CHECK(pixels_held.nbytes() == 3 * pixels);
  const D::InMemoryLabeledImageDataset files_held(folder.entries, kTraining, compressed);
  CHECK(files_held.nbytes() == file_bytes);
  // Compressed storage gives the streamed examples exactly; decoded ones at a shorter side give the
  // evaluation crop within resampling tolerance.
  const D::LabeledImageDataset streamed(folder.entries, kTraining);
  const D::LabeledImageDataset streamed_eval(folder.entries, evaluation);
  for (int64_t i = 0; i < 4; ++i) {
    CHECK(files_held.get(i, 3)[0].to_vector<float>() == streamed.get(i, 3)[0].to_vector<float>());
    expect_close(pixels_held.get(i)[0], streamed_eval.get(i)[0], 0.1, 0);
  }
  CHECK(D::available_memory_bytes() > 0);
  CHECK(D::format_bytes(3 << 20) == "3.0 MiB");
}

TEST_CASE("sampling a JPEG's Y, Cb, Cr planes matches sampling its RGB decode") {
  // A 4:2:0 colour JPEG, a grayscale one, and each through both output channel counts.
  const D::Image rgb = rgb_pattern(120, 150);
  std::vector<uint8_t> gray;
  for (size_t i = 0; i < rgb.pixels.size(); i += 3) gray.push_back(rgb.pixels[i + 1]);
  const std::vector<std::vector<uint8_t>> files = {
      tj_encode(rgb.pixels.data(), 120, 150, TJPF_RGB, TJSAMP_420, 95),
      tj_encode(gray.data(), 120, 150, TJPF_GRAY, TJSAMP_GRAY, 95)};
  for (const std::vector<uint8_t>& bytes : files) {
    const D::JpegPlanes planes = D::decode_jpeg_planes(bytes, "p.jpg", 0, 0);
    CHECK(planes.height == 120);
    CHECK(planes.width == 150);
    CHECK(planes.planes.size() == (&bytes == &files[0] ? 3u : 1u));
    const D::Image full = D::decode_image(bytes, "p.jpg");
    for (int64_t channels : {3, 1}) {
      D::ImageOptions training = kTraining;
      D::ImageOptions evaluation = kEvaluation;
      training.channels = evaluation.channels = channels;
      for (int64_t epoch = 0; epoch < 4; ++epoch) {
        // Fancy chroma upsampling against bilinear chroma: a few levels apart (stddev 0.2: 0.1 is 5 levels).
        expect_close(D::transform_image_bytes(bytes, "p.jpg", training, 1, epoch),
                     D::transform_image(full, training, 1, epoch, "p.jpg"), 0.1, 0);
      }
      expect_close(D::transform_image_bytes(bytes, "p.jpg", evaluation, 0, 0),
                   D::transform_image(full, evaluation, 0, 0, "p.jpg"), 0.1, 0);
    }
  }
  // CMYK files have no YCbCr planes: callers decode them to RGB.
  std::vector<uint8_t> cmyk(16 * 16 * 4, 200);
  CHECK(D::decode_jpeg_planes(tj_encode(cmyk.data(), 16, 16, TJPF_CMYK), "c.jpg", 0, 0).planes.empty());
}

TEST_CASE("a grayscale JPEG first on a thread samples its one plane (no chroma scratch behind it)") {
  // The small preset's list images: gray, luminance output, resized and centre-cropped. On a new thread
  // the chroma scratch planes have never been allocated (UBSan found pointer arithmetic on them).
  const D::Image rgb = rgb_pattern(96, 120);
  std::vector<uint8_t> gray;
  for (size_t i = 0; i < rgb.pixels.size(); i += 3) gray.push_back(rgb.pixels[i + 1]);
  const std::vector<uint8_t> bytes = tj_encode(gray.data(), 96, 120, TJPF_GRAY, TJSAMP_GRAY, 95);
  const D::ImageOptions small{.crop_height = 28, .crop_width = 28, .resize_shorter = 28, .channels = 1};
  Array sampled;
  std::thread([&] { sampled = D::transform_image_bytes(bytes, "g.jpg", small, 0, 0); }).join();
  CHECK(sampled.shape() == Shape({1, 28, 28}));
  expect_close(sampled, D::transform_image(D::decode_image(bytes, "g.jpg"), small, 0, 0, "g.jpg"), 0.02, 0);
}

TEST_CASE("the region sampler equals cropping then resize_bilinear, mirrored or not, at any width") {
  // Widths around the 16-output blocks of the vectorised path, up- and downscaling.
  const D::Image image = rgb_pattern(50, 70);
  for (int64_t out : {5, 16, 17, 33, 40, 90}) {
    for (bool mirror : {false, true}) {
      const Array got = D::sample_region(image, {0, 0, 50, 70}, out, out, mirror, {});
      D::Image resized = D::resize_bilinear(image, out, out);
      const Array expected = D::augment_image(resized, {}, 0, 0, "p");
      std::vector<float> want = expected.to_vector<float>();
      if (mirror) {
        for (int64_t c = 0; c < 3; ++c) {
          for (int64_t y = 0; y < out; ++y) {
            auto row = want.begin() + (c * out + y) * out;
            std::reverse(row, row + out);
          }
        }
      }
      const std::vector<float> have = got.to_vector<float>();
      float worst = 0;
      for (size_t i = 0; i < have.size(); ++i) worst = std::max(worst, std::abs(have[i] - want[i]));
      INFO("out ", out, " mirror ", mirror);
      CHECK(worst <= 0.51f / 255);
    }
  }
}

TEST_CASE("examples fetched from many threads at once equal the serial ones") {
  PatternFolder folder(6);
  write_bytes(folder.entries[2].path, {0xff, 0xd8, 0xff, 0xc0, 0x00});  // a corrupt header among them
  D::ImageOptions options = kTraining;
  options.on_bad_image = D::BadImagePolicy::skip;
  const D::LabeledImageDataset dataset(folder.entries, options);
  std::vector<std::vector<float>> serial;
  for (int64_t i = 0; i < 24; ++i) serial.push_back(dataset.get(i % 6, i / 6)[0].to_vector<float>());
  std::vector<std::vector<std::vector<float>>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t i = 0; i < 24; ++i) {
        const int64_t k = (i + static_cast<int64_t>(t) * 5) % 24;
        results[t].push_back(dataset.get(k % 6, k / 6)[0].to_vector<float>());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < 4; ++t) {
    for (int64_t i = 0; i < 24; ++i) {
      CHECK(results[t][static_cast<size_t>(i)] == serial[static_cast<size_t>((i + static_cast<int64_t>(t) * 5) % 24)]);
    }
  }
}
