#include "image_testing.h"

#include <cmath>
#include <fstream>
#include <set>

using namespace kusari;
using namespace kusari::testing;
namespace D = kusari::data;

namespace {

// Writes three JPEGs of different sizes and a list naming them with labels 3, 1, 4.
struct ImageFolder {
  TempDir dir;
  ImageFolder() {
    std::filesystem::create_directory(dir.file("class"));
    write_bytes(dir.file("class/a.jpg"), encode_rgb(rgb_pattern(20, 30)));
    write_bytes(dir.file("class/b.jpg"), encode_rgb(rgb_pattern(40, 24)));
    write_bytes(dir.file("c.jpg"), encode_rgb(rgb_pattern(16, 16)));
    std::ofstream(dir.file("list.txt")) << "class/a.jpg 3\n\nclass/b.jpg 1\nc.jpg   4\n";
  }
};

}  // namespace

TEST_CASE("decode_jpeg gives back what TurboJPEG encoded") {
  const D::Image original = rgb_pattern(12, 17);
  const D::Image decoded = D::decode_jpeg(encode_rgb(original), "pattern");
  CHECK(decoded.height == 12);
  CHECK(decoded.width == 17);
  CHECK(max_difference(decoded, original) <= 4);
}

TEST_CASE("bad JPEG data throws IOError naming the file") {
  TempDir dir;
  write_bytes(dir.file("garbage.jpg"), {1, 2, 3, 4, 5, 6, 7, 8});
  expect_error<IOError>([&] { D::read_jpeg(dir.file("garbage.jpg")); },
                        {dir.file("garbage.jpg"), "not a readable JPEG"});
  std::vector<uint8_t> bytes = encode_rgb(rgb_pattern(64, 64));
  bytes.resize(bytes.size() / 2);
  write_bytes(dir.file("truncated.jpg"), bytes);
  expect_error<IOError>([&] { D::read_jpeg(dir.file("truncated.jpg")); }, {dir.file("truncated.jpg"), "Premature end"});
  expect_error<IOError>([&] { D::read_jpeg(dir.file("missing.jpg")); }, {dir.file("missing.jpg"), "cannot open"});
}

TEST_CASE("bilinear resizing with aligned pixel centres") {
  D::Image two{1, 2, {0, 0, 0, 200, 100, 40}};
  const D::Image wide = D::resize_bilinear(two, 1, 4);
  // Output centres 0.5, 1.5, 2.5, 3.5 map to input -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
  CHECK(wide.pixels == std::vector<uint8_t>{0, 0, 0, 50, 25, 10, 150, 75, 30, 200, 100, 40});
  // Halving averages 2 x 2 blocks.
  D::Image four{2, 2, {10, 10, 10, 30, 30, 30, 50, 50, 50, 70, 70, 70}};
  CHECK(D::resize_bilinear(four, 1, 1).pixels == std::vector<uint8_t>{40, 40, 40});
  CHECK(D::resize_bilinear(four, 2, 2).pixels == four.pixels);
  const D::Image smooth = rgb_pattern(40, 60);
  CHECK(max_difference(D::resize_bilinear(smooth, 20, 30), rgb_pattern(20, 30)) <= 7);
  expect_error<ValueError>([&] { D::resize_bilinear(four, 0, 3); }, {"positive", "0 x 3"});
}

TEST_CASE("augment_image crops, flips and normalises into float32 (3, H, W)") {
  // A 3 x 4 image whose red channel is 10 * (4 y + x), green 1, blue 2.
  D::Image image{3, 4, {}};
  for (int i = 0; i < 12; ++i) image.pixels.insert(image.pixels.end(), {static_cast<uint8_t>(10 * i), 1, 2});
  const Array whole = D::augment_image(image, {}, 0, 0, "img");
  CHECK(whole.shape() == Shape{3, 3, 4});
  CHECK(whole.dtype() == Dtype::float32);
  CHECK(whole.get_item({Index{int64_t{0}}, Index{int64_t{2}}, Index{int64_t{3}}}).item<float>() ==
        doctest::Approx(110 / 255.0));
  D::ImageOptions centre{.crop_height = 1, .crop_width = 2};
  expect_values(D::augment_image(image, centre, 0, 0, "img").get_item({Index{int64_t{0}}}),
                {50 / 255.0, 60 / 255.0}, 1e-6);
  D::ImageOptions normalised{.mean = {0.5f, 0, 0}, .stddev = {0.25f, 1, 2}};
  const Array n = D::augment_image(image, normalised, 0, 0, "img");
  CHECK(n.get_item({Index{int64_t{0}}, Index{int64_t{0}}, Index{int64_t{1}}}).item<float>() ==
        doctest::Approx((10 / 255.0 - 0.5) / 0.25));
  CHECK(n.get_item({Index{int64_t{2}}, Index{int64_t{0}}, Index{int64_t{0}}}).item<float>() ==
        doctest::Approx(2 / 255.0 / 2));
  expect_error<ShapeError>([&] { D::augment_image(image, {.crop_height = 4, .crop_width = 4}, 0, 0, "img.jpg"); },
                           {"img.jpg", "4 x 4", "3 x 4"});
}

TEST_CASE("random crops and flips depend only on seed, index and epoch") {
  const D::Image image = rgb_pattern(10, 10);
  const D::ImageOptions options{.crop_height = 6, .crop_width = 6, .random_crop = true, .random_flip = true, .seed = 5};
  std::set<std::vector<float>> seen;
  int flipped = 0;
  for (int64_t epoch = 0; epoch < 40; ++epoch) {
    const Array a = D::augment_image(image, options, 3, epoch, "img");
    CHECK(a.to_vector<float>() == D::augment_image(image, options, 3, epoch, "img").to_vector<float>());
    seen.insert(a.to_vector<float>());
    // Red grows to the right unless the crop was mirrored.
    const std::vector<float> red = a.get_item({Index{int64_t{0}}, Index{int64_t{0}}}).to_vector<float>();
    if (red.front() > red.back()) ++flipped;
  }
  CHECK(seen.size() > 10);
  CHECK(flipped > 5);
  CHECK(flipped < 35);
  const D::ImageOptions other = {.crop_height = 6, .crop_width = 6, .random_crop = true, .seed = 6};
  const D::ImageOptions same_but_seed = {.crop_height = 6, .crop_width = 6, .random_crop = true, .seed = 5};
  int differ = 0;
  for (int64_t index = 0; index < 10; ++index) {
    differ += D::augment_image(image, other, index, 0, "img").to_vector<float>() !=
              D::augment_image(image, same_but_seed, index, 0, "img").to_vector<float>();
  }
  CHECK(differ > 0);
}

TEST_CASE("LabeledImageDataset reads a list, decodes, resizes and labels") {
  ImageFolder folder;
  const D::ImageOptions options{.resize_height = 12, .resize_width = 10};
  D::LabeledImageDataset dataset(folder.dir.file("list.txt"), folder.dir.path(), options);
  REQUIRE(dataset.size() == 3);
  CHECK(dataset.entries()[1].path == folder.dir.file("class/b.jpg"));
  const D::Example e = dataset.get(1);
  REQUIRE(e.size() == 2);
  CHECK(e[0].shape() == Shape{3, 12, 10});
  CHECK(e[0].dtype() == Dtype::float32);
  CHECK(e[1].shape() == Shape{});
  CHECK(e[1].dtype() == Dtype::int32);
  CHECK(e[1].item<int>() == 1);
  // The blue channel is 100 everywhere.
  CHECK(ops::amax(ops::abs(e[0].get_item({Index{int64_t{2}}}) - 100 / 255.0)).item<float>() < 0.02f);
  const D::Example batch = D::concat_examples({dataset.get(0), dataset.get(1), dataset.get(2)});
  CHECK(batch[0].shape() == Shape{3, 3, 12, 10});
  CHECK(batch[1].to_vector<int>() == std::vector<int>{3, 1, 4});
}

TEST_CASE("InMemoryLabeledImageDataset gives the same examples as LabeledImageDataset") {
  ImageFolder folder;
  const D::ImageOptions options{.resize_height = 14, .resize_width = 14, .crop_height = 10, .crop_width = 8,
                                .random_crop = true, .random_flip = true, .mean = {0.4f, 0.5f, 0.6f},
                                .stddev = {0.2f, 0.3f, 0.25f}, .seed = 9};
  D::LabeledImageDataset streamed(folder.dir.file("list.txt"), folder.dir.path(), options);
  D::InMemoryLabeledImageDataset cached(folder.dir.file("list.txt"), folder.dir.path(), options);
  CHECK(cached.size() == 3);
  CHECK(cached.nbytes() == 3 * 14 * 14 * 3);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    for (int64_t i = 0; i < 3; ++i) {
      const D::Example a = streamed.get(i, epoch), b = cached.get(i, epoch);
      CHECK(a[0].shape() == Shape{3, 10, 8});
      CHECK(a[0].to_vector<float>() == b[0].to_vector<float>());
      CHECK(a[1].item<int>() == b[1].item<int>());
    }
  }
}

TEST_CASE("bad list files and images throw naming the file") {
  ImageFolder folder;
  std::ofstream(folder.dir.file("bad.txt")) << "class/a.jpg 3\nclass/b.jpg one\n";
  expect_error<IOError>([&] { D::LabeledImageDataset(folder.dir.file("bad.txt"), folder.dir.path()); },
                        {folder.dir.file("bad.txt"), "line 2", "class/b.jpg one"});
  std::ofstream(folder.dir.file("extra.txt")) << "a.jpg 1 2\n";
  expect_error<IOError>([&] { D::LabeledImageDataset(folder.dir.file("extra.txt"), folder.dir.path()); },
                        {"line 1", "a.jpg 1 2"});
  expect_error<IOError>([&] { D::LabeledImageDataset(folder.dir.file("none.txt"), folder.dir.path()); },
                        {folder.dir.file("none.txt"), "cannot open"});
  write_bytes(folder.dir.file("class/b.jpg"), {0xff, 0xd8, 0xff, 0x00});
  D::LabeledImageDataset lazy(folder.dir.file("list.txt"), folder.dir.path());
  expect_error<IOError>([&] { lazy.get(1); }, {folder.dir.file("class/b.jpg")});
  expect_error<IOError>([&] { D::InMemoryLabeledImageDataset(folder.dir.file("list.txt"), folder.dir.path()); },
                        {folder.dir.file("class/b.jpg")});
  const D::ImageOptions too_big{.crop_height = 18, .crop_width = 18};
  D::LabeledImageDataset cropped(folder.dir.file("list.txt"), folder.dir.path(), too_big);
  expect_error<ShapeError>([&] { cropped.get(2); }, {folder.dir.file("c.jpg"), "18 x 18", "16 x 16"});
  expect_error<ValueError>(
      [&] { D::LabeledImageDataset(folder.dir.file("list.txt"), folder.dir.path(), {.resize_height = 10}); },
      {"resize", "10 x 0"});
}
