// Decoding: grayscale and CMYK JPEGs, PNGs of every colour type, signature sniffing, scaled decoding.
#include "image_testing.h"

using namespace kusari;
using namespace kusari::testing;
namespace D = kusari::data;

namespace {

// The pattern's pixels as 16-bit big-endian samples (each byte v as v * 257).
std::vector<uint8_t> widen(const std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> wide;
  for (uint8_t v : bytes) wide.insert(wide.end(), {v, v});
  return wide;
}

// The pattern's red channel (a gray image of one byte a pixel).
std::vector<uint8_t> red(const D::Image& image) {
  std::vector<uint8_t> gray;
  for (size_t i = 0; i < image.pixels.size(); i += 3) gray.push_back(image.pixels[i]);
  return gray;
}

// An RGB image with every channel equal to `gray`.
D::Image gray_image(const std::vector<uint8_t>& gray, int64_t height, int64_t width) {
  D::Image image{height, width, {}};
  for (uint8_t v : gray) image.pixels.insert(image.pixels.end(), {v, v, v});
  return image;
}

}  // namespace

TEST_CASE("grayscale JPEGs decode to RGB with equal channels") {
  const D::Image original = rgb_pattern(24, 40);
  const std::vector<uint8_t> gray = red(original);
  const std::vector<uint8_t> jpeg = tj_encode(gray.data(), 24, 40, TJPF_GRAY, TJSAMP_GRAY);
  const D::Image decoded = D::decode_image(jpeg, "gray.jpg");
  CHECK(max_difference(decoded, gray_image(gray, 24, 40)) <= 3);
}

TEST_CASE("CMYK JPEGs with the Adobe marker decode as inverted CMYK") {
  // Stored values C = R, M = G, Y = B and K = 200: an Adobe (inverted) file means R' = R * 200 / 255.
  const D::Image original = rgb_pattern(16, 32);
  std::vector<uint8_t> cmyk;
  D::Image expected{16, 32, {}};
  for (size_t i = 0; i < original.pixels.size(); i += 3) {
    cmyk.insert(cmyk.end(), {original.pixels[i], original.pixels[i + 1], original.pixels[i + 2], 200});
    for (size_t c = 0; c < 3; ++c) expected.pixels.push_back(static_cast<uint8_t>(original.pixels[i + c] * 200 / 255));
  }
  const std::vector<uint8_t> jpeg = tj_encode(cmyk.data(), 16, 32, TJPF_CMYK);
  const std::optional<D::JpegHeader> header = D::scan_jpeg_header(jpeg);
  REQUIRE(header);
  CHECK(header->adobe);
  CHECK(header->height == 16);
  CHECK(header->width == 32);
  const D::Image decoded = D::decode_image(jpeg, "cmyk.jpg");
  CHECK(max_difference(decoded, expected) <= 4);
  // The conversion itself, both conventions.
  CHECK(D::cmyk_to_rgb({255, 0, 128, 255}, true) == std::vector<uint8_t>{255, 0, 128});
  CHECK(D::cmyk_to_rgb({0, 255, 127, 0}, false) == std::vector<uint8_t>{255, 0, 128});
  CHECK(D::cmyk_to_rgb({255, 255, 255, 0}, true) == std::vector<uint8_t>{0, 0, 0});
}

TEST_CASE("PNGs of every colour type and depth decode to 8-bit RGB, alpha dropped") {
  const D::Image rgb = rgb_pattern(6, 7);
  const std::vector<uint8_t> gray = red(rgb);
  std::vector<uint8_t> rgba, gray_alpha;
  for (size_t i = 0; i < rgb.pixels.size(); i += 3) {
    rgba.insert(rgba.end(), {rgb.pixels[i], rgb.pixels[i + 1], rgb.pixels[i + 2], static_cast<uint8_t>(i % 256)});
    gray_alpha.insert(gray_alpha.end(), {rgb.pixels[i], 7});
  }
  const D::Image gray_rgb = gray_image(gray, 6, 7);
  CHECK(D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_RGB, 8, rgb.pixels), "a.png").pixels == rgb.pixels);
  CHECK(D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_RGB, 16, widen(rgb.pixels)), "a.png").pixels == rgb.pixels);
  CHECK(D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_RGBA, 8, rgba), "a.png").pixels == rgb.pixels);
  CHECK(D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_RGBA, 16, widen(rgba)), "a.png").pixels == rgb.pixels);
  CHECK(D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_GRAY, 8, gray), "a.png").pixels == gray_rgb.pixels);
  CHECK(D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_GRAY, 16, widen(gray)), "a.png").pixels == gray_rgb.pixels);
  CHECK(D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_GRAY_ALPHA, 8, gray_alpha), "a.png").pixels ==
        gray_rgb.pixels);
  // A palette of 42 entries indexed by (x + y) % 42.
  std::vector<png_color> palette;
  for (int k = 0; k < 42; ++k) palette.push_back({static_cast<png_byte>(6 * k), static_cast<png_byte>(255 - k), 9});
  std::vector<uint8_t> indices, expected;
  for (int y = 0; y < 6; ++y) {
    for (int x = 0; x < 7; ++x) {
      const png_color& p = palette[static_cast<size_t>((x + y) % 42)];
      indices.push_back(static_cast<uint8_t>((x + y) % 42));
      expected.insert(expected.end(), {p.red, p.green, p.blue});
    }
  }
  const D::Image decoded = D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_PALETTE, 8, indices, palette), "p.png");
  CHECK(decoded.height == 6);
  CHECK(decoded.width == 7);
  CHECK(decoded.pixels == expected);
  CHECK(D::image_size(encode_png(6, 7, PNG_COLOR_TYPE_GRAY, 8, gray), "a.png").width == 7);
  // Adam7 interlacing, and 1-bit gray (a set bit is white): rows of 0b10110000 for 4 pixels.
  CHECK(D::decode_image(encode_png(6, 7, PNG_COLOR_TYPE_RGB, 8, rgb.pixels, {}, true), "i.png").pixels == rgb.pixels);
  const D::Image bits = D::decode_image(encode_png(2, 4, PNG_COLOR_TYPE_GRAY, 1, {0xb0, 0xb0}), "b.png");
  CHECK(bits.pixels == std::vector<uint8_t>{255, 255, 255, 0, 0, 0, 255, 255, 255, 255, 255, 255,
                                            255, 255, 255, 0, 0, 0, 255, 255, 255, 255, 255, 255});
}

TEST_CASE("image sizes come from the headers, past long metadata") {
  // A JPEG with an APP1 segment of 20000 bytes before its frame header.
  const D::Image original = rgb_pattern(30, 50);
  std::vector<uint8_t> jpeg = encode_rgb(original);
  std::vector<uint8_t> app1 = {0xff, 0xe1, 0x4e, 0x22};  // length 20002
  app1.resize(4 + 20000, 'x');
  jpeg.insert(jpeg.begin() + 2, app1.begin(), app1.end());
  TempDir dir;
  write_bytes(dir.file("long.jpg"), jpeg);
  const D::ImageSize size = D::read_image_size(dir.file("long.jpg"));
  CHECK(size.height == 30);
  CHECK(size.width == 50);
  CHECK(max_difference(D::read_image(dir.file("long.jpg")), original) <= 4);
  CHECK_FALSE(D::scan_jpeg_header(std::vector<uint8_t>(jpeg.begin(), jpeg.begin() + 4096)));
  CHECK_FALSE(D::scan_jpeg_header({1, 2, 3}));
}

TEST_CASE("a PNG named .JPEG is read by its signature; anything else is refused naming the path") {
  TempDir dir;
  const D::Image rgb = rgb_pattern(5, 9);
  write_bytes(dir.file("n01.JPEG"), encode_png(5, 9, PNG_COLOR_TYPE_RGB, 8, rgb.pixels));
  CHECK(D::read_image(dir.file("n01.JPEG")).pixels == rgb.pixels);
  const D::ImageSize size = D::read_image_size(dir.file("n01.JPEG"));
  CHECK(size.height == 5);
  CHECK(size.width == 9);
  write_bytes(dir.file("text.JPEG"), {'h', 'e', 'l', 'l', 'o'});
  expect_error<IOError>([&] { D::read_image(dir.file("text.JPEG")); }, {dir.file("text.JPEG"), "JPEG", "PNG"});
  expect_error<IOError>([&] { D::read_image_size(dir.file("text.JPEG")); }, {dir.file("text.JPEG")});
  write_bytes(dir.file("empty.jpg"), {});
  expect_error<IOError>([&] { D::read_image(dir.file("empty.jpg")); }, {dir.file("empty.jpg")});
  std::vector<uint8_t> png = encode_png(5, 9, PNG_COLOR_TYPE_RGB, 8, rgb.pixels);
  png.resize(png.size() - 20);
  write_bytes(dir.file("cut.png"), png);
  expect_error<IOError>([&] { D::read_image(dir.file("cut.png")); }, {dir.file("cut.png"), "PNG"});
  expect_error<IOError>([&] { D::read_image(dir.file("missing.png")); }, {dir.file("missing.png")});
}

TEST_CASE("the JPEG scale is the smallest fast factor that still covers the request") {
  CHECK(D::choose_jpeg_scale(375, 500, 0, 0).denom == 8);
  CHECK(D::choose_jpeg_scale(375, 500, 224, 224).denom == 1);
  CHECK(D::choose_jpeg_scale(375, 500, 187, 250).denom == 2);
  CHECK(D::choose_jpeg_scale(375, 500, 189, 250).denom == 1);
  CHECK(D::choose_jpeg_scale(1000, 1500, 240, 300).denom == 4);
  CHECK(D::choose_jpeg_scale(10, 10, 200, 200).denom == 1);
  CHECK(D::scaled_size(375, {1, 8}) == 47);
}

TEST_CASE("a scaled decode matches a full decode followed by the same resize") {
  const D::Image original = rgb_pattern(160, 240);
  const std::vector<uint8_t> jpeg = encode_rgb(original);
  const D::Image quarter = D::decode_image(jpeg, "big.jpg", 40, 60);
  CHECK(quarter.height == 40);
  CHECK(quarter.width == 60);
  CHECK(max_difference(quarter, D::resize_bilinear(D::decode_image(jpeg, "big.jpg"), 40, 60)) <= 8);
  const D::Image half = D::decode_image(jpeg, "big.jpg", 41, 60);
  CHECK(half.height == 80);
  CHECK(max_difference(half, D::resize_bilinear(D::decode_image(jpeg, "big.jpg"), 80, 120)) <= 8);
}

TEST_CASE("corrupt and truncated files give IOError or an image, never a crash") {
  const D::Image rgb = rgb_pattern(24, 32);
  const std::vector<std::vector<uint8_t>> originals = {
      tj_encode(rgb.pixels.data(), 24, 32, TJPF_RGB, TJSAMP_420, 90), encode_png(24, 32, PNG_COLOR_TYPE_RGB, 8,
                                                                                 rgb.pixels)};
  const D::ImageOptions training{.crop_height = 16, .crop_width = 16, .random_flip = true, .random_resized_crop = true};
  int refused = 0, decoded = 0;
  const auto attempt = [&](const std::vector<uint8_t>& bytes) {
    try {
      D::decode_image(bytes, "fuzz");
      D::transform_image_bytes(bytes, "fuzz", training, 0, 0);
      ++decoded;
    } catch (const IOError& e) {
      CHECK(std::string(e.what()).find("fuzz") != std::string::npos);
      ++refused;
    }
  };
  for (const std::vector<uint8_t>& original : originals) {
    for (size_t length = 0; length < original.size(); length += 7) {
      attempt(std::vector<uint8_t>(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(length)));
    }
    for (uint64_t k = 0; k < 300; ++k) {
      std::vector<uint8_t> bytes = original;
      for (uint64_t flip = 0; flip < 3; ++flip) {
        const uint64_t bits = D::random_bits(7, k, flip);
        bytes[bits % std::min<size_t>(bytes.size(), 200)] ^= static_cast<uint8_t>(1 + (bits >> 32) % 255);
      }
      attempt(bytes);
    }
  }
  CHECK(refused > 100);
  CHECK(decoded > 0);
  // A failed header read leaves TurboJPEG 2.1's handle unusable; the next file must still decode.
  attempt({0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0xff});
  CHECK(max_difference(D::decode_image(encode_rgb(rgb), "good.jpg"), rgb) <= 4);
  // A frame header claiming 60000 x 60000 pixels is refused before anything is allocated.
  std::vector<uint8_t> huge = originals[0];
  const std::optional<D::JpegHeader> header = D::scan_jpeg_header(huge);
  REQUIRE(header);
  size_t at = 2;  // walk the marker segments to the baseline frame header
  while (huge[at + 1] != 0xc0) at += 2 + ((size_t{huge[at + 2]} << 8) | huge[at + 3]);
  for (size_t k : {at + 5, at + 7}) {
    huge[k] = 0xea;  // 0xea60 = 60000
    huge[k + 1] = 0x60;
  }
  expect_error<IOError>([&] { D::decode_image(huge, "huge.jpg"); }, {"huge.jpg", "60000 x 60000"});
  expect_error<IOError>([&] { D::transform_image_bytes(huge, "huge.jpg", training, 0, 0); }, {"huge.jpg"});
}
