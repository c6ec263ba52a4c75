#pragma once
// MNIST-style data sets read from IDX files: images as float32 in [0, 1], labels as int32.

#include <memory>
#include <string>

#include <kusari/core/api.h>
#include <kusari/data/tuple_dataset.h>

namespace kusari::data {

// Where the Debian package dataset-fashion-mnist installs Fashion-MNIST.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// How IDX images become arrays.
struct KUSARI_API IdxOptions {
  bool flatten = false;  // images of shape (N, rows * cols) instead of (N, 1, rows, cols)
};

// {image, label} examples from an IDX image file (unsigned bytes, N x rows x cols) and an IDX label
// file (unsigned bytes, N), each plain or gzip. Wrong item types throw DtypeError, wrong axis counts
// and differing image and label counts ShapeError, unreadable or malformed files IOError.
KUSARI_API std::shared_ptr<TupleDataset> idx(const std::string& images_path, const std::string& labels_path,
                                             IdxOptions options = {});
// MNIST from `dir` holding {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz].
KUSARI_API std::shared_ptr<TupleDataset> mnist(const std::string& dir, bool train = true, IdxOptions options = {});
// Fashion-MNIST (same file names as MNIST): 60000 training or 10000 test examples of 28 x 28.
KUSARI_API std::shared_ptr<TupleDataset> fashion_mnist(bool train = true, const std::string& dir = kFashionMnistDir,
                                                       IdxOptions options = {});

}  // namespace kusari::data
