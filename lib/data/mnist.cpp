#include <kusari/data/mnist.h>

#include <filesystem>

#include <kusari/core/parallel.h>
#include <kusari/data/binary_file.h>
#include <kusari/data/idx_file.h>

namespace kusari::data {
namespace {

// The header of an IDX file of unsigned bytes with `ndim` axes; throws naming the file otherwise.
IdxHeader unsigned_byte_header(const std::vector<uint8_t>& bytes, const std::string& path, int64_t ndim,
                               const char* layout) {
  IdxHeader header = parse_idx_header(bytes, path);
  if (header.type != IdxType::uint8) {
    throw DtypeError(cat(path, ": expected IDX items of type unsigned byte (0x08) at byte offset 2, got ",
                         idx_type_name(header.type)));
  }
  if (header.shape.ndim() != ndim) {
    throw ShapeError(cat(path, ": expected ", ndim, " axes ", layout, " at byte offset 3, got ", header.shape.ndim(),
                         " (shape ", header.shape, ")"));
  }
  return header;
}

// Pixels scaled to [0, 1] as float32 of the given shape.
Array scaled_pixels(const uint8_t* pixels, const Shape& shape) {
  Array out = Array::empty(shape, Dtype::float32, Device::cpu());
  float* dst = out.data<float>();
  parallel_for(shape.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<float>(pixels[i]) * (1.0f / 255.0f);
  });
  return out;
}

// dir/name.gz when it exists, else dir/name (an uncompressed copy).
std::string idx_path(const std::string& dir, const std::string& name) {
  const std::filesystem::path gz = std::filesystem::path(dir) / (name + ".gz");
  return std::filesystem::exists(gz) ? gz.string() : (std::filesystem::path(dir) / name).string();
}

}  // namespace

std::shared_ptr<TupleDataset> idx(const std::string& images_path, const std::string& labels_path,
                                  IdxOptions options) {
  const std::vector<uint8_t> image_bytes = read_maybe_gzip(images_path);
  const IdxHeader images = unsigned_byte_header(image_bytes, images_path, 3, "(images, rows, cols)");
  const std::vector<uint8_t> label_bytes = read_maybe_gzip(labels_path);
  const IdxHeader labels = unsigned_byte_header(label_bytes, labels_path, 1, "(labels)");
  const int64_t n = images.shape[0], rows = images.shape[1], cols = images.shape[2];
  if (labels.shape[0] != n) {
    throw ShapeError(cat("idx: ", images_path, " holds ", n, " images but ", labels_path, " holds ", labels.shape[0],
                         " labels"));
  }
  const Shape shape = options.flatten ? Shape{n, rows * cols} : Shape{n, 1, rows, cols};
  Array x = scaled_pixels(image_bytes.data() + images.data_offset, shape);
  std::vector<int32_t> y(label_bytes.begin() + labels.data_offset, label_bytes.end());
  return std::make_shared<TupleDataset>(std::vector<Array>{x, Array::from_vector(y, {n}, {}, Device::cpu())});
}

std::shared_ptr<TupleDataset> mnist(const std::string& dir, bool train, IdxOptions options) {
  const std::string prefix = train ? "train" : "t10k";
  return idx(idx_path(dir, prefix + "-images-idx3-ubyte"), idx_path(dir, prefix + "-labels-idx1-ubyte"), options);
}

std::shared_ptr<TupleDataset> fashion_mnist(bool train, const std::string& dir, IdxOptions options) {
  return mnist(dir, train, options);
}

}  // namespace kusari::data
