#include <kusari/data/png.h>

#include <cstring>
#include <utility>

#include <png.h>

#include <kusari/core/error.h>

namespace kusari::data {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

// What one decode shares with libpng's callbacks; lives in the caller's frame, so the longjmp out of
// an error leaves nothing to destroy.
struct Context {
  const std::vector<uint8_t>* bytes = nullptr;
  size_t offset = 0;   // next byte libpng reads
  std::string error;   // libpng's message, when it failed
  Image* out = nullptr;
};

void on_error(png_structp png, png_const_charp message) {
  static_cast<Context*>(png_get_error_ptr(png))->error = message;
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // recoverable (e.g. a bad ancillary chunk)

void on_read(png_structp png, png_bytep data, size_t length) {
  auto* context = static_cast<Context*>(png_get_io_ptr(png));
  if (context->bytes->size() - context->offset < length) png_error(png, "the data ends early");
  std::memcpy(data, context->bytes->data() + context->offset, length);
  context->offset += length;
}

// Asks libpng for 8-bit RGB whatever the file holds: palettes and low depths expanded, 16 bits cut to
// the high byte, gray copied to three channels, alpha dropped (not composed).
// Returns the number of interlace passes.
int request_rgb8(png_structp png, png_infop info) {
  png_set_expand(png);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_gray_to_rgb(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  return passes;
}

// Decodes into context->out; false (with context->error) when libpng failed. Only plain data lives
// between the setjmp and libpng's longjmp.
bool decode(Context* context) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, context, on_error, on_warning);
  if (png == nullptr) {
    context->error = "cannot start libpng";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_read_fn(png, context, on_read);
  png_read_info(png, info);
  const int passes = request_rgb8(png, info);
  Image& out = *context->out;
  out.height = png_get_image_height(png, info);
  out.width = png_get_image_width(png, info);
  if (out.height > kMaxImagePixels / out.width) png_error(png, "more pixels than kMaxImagePixels");
  if (png_get_rowbytes(png, info) != static_cast<size_t>(out.width) * 3) png_error(png, "unexpected row size");
  out.pixels.resize(static_cast<size_t>(out.height * out.width * 3));
  for (int pass = 0; pass < passes; ++pass) {
    for (int64_t y = 0; y < out.height; ++y) png_read_row(png, out.pixels.data() + y * out.width * 3, nullptr);
  }
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

uint32_t big_endian(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

bool is_png(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= sizeof kSignature && std::memcmp(bytes.data(), kSignature, sizeof kSignature) == 0;
}

std::pair<int64_t, int64_t> png_size(const std::vector<uint8_t>& bytes, const std::string& name) {
  // Signature (8), IHDR length (4) and type (4), then width and height (4 each).
  if (!is_png(bytes) || bytes.size() < 24 || std::memcmp(bytes.data() + 12, "IHDR", 4) != 0) {
    throw IOError(cat(name, ": expected a PNG signature and IHDR chunk in the first 24 bytes, got ", bytes.size(),
                      " bytes without them"));
  }
  return {big_endian(bytes.data() + 20), big_endian(bytes.data() + 16)};
}

Image decode_png(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (!is_png(bytes)) throw IOError(cat(name, ": not a readable PNG (no PNG signature)"));
  Image out;
  Context context{&bytes, 0, {}, &out};
  if (!decode(&context)) {
    throw IOError(cat(name, ": cannot decode the PNG data of ", bytes.size(), " bytes (", context.error, ")"));
  }
  return out;
}

}  // namespace kusari::data
