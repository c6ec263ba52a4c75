#pragma once
// Linear: the fully connected layer y = x W^T + b.

#include <cstdint>

#include <kusari/core/api.h>
#include <kusari/links/link.h>

namespace kusari::links {

class Linear;

// Options of Linear, set fluently: LinearOptions(784, 100).nobias().initial_w(HeNormal()).
class KUSARI_API LinearOptions {
 public:
  // A layer with out_size outputs whose input size is inferred at the first forward.
  explicit LinearOptions(int64_t out_size) : LinearOptions(0, out_size) {}
  // A layer from in_size to out_size features; in_size 0 means inferred at the first forward.
  LinearOptions(int64_t in_size, int64_t out_size) : in_size_(in_size), out_size_(out_size) {}
  // Leaves out the bias (or keeps it with false).
  LinearOptions& nobias(bool value = true) { nobias_ = value; return *this; }
  // Initializer of W (default LeCunNormal).
  LinearOptions& initial_w(Initializer init) { initial_w_ = std::move(init); return *this; }
  // Initializer of b (default zeros).
  LinearOptions& initial_bias(Initializer init) { initial_bias_ = std::move(init); return *this; }

 private:
  friend class Linear;
  int64_t in_size_;
  int64_t out_size_;
  bool nobias_ = false;
  Initializer initial_w_;
  Initializer initial_bias_;
};

// Parameters W (out_size, in_size) and b (out_size); forward flattens x to (N, -1) as F::linear does.
class KUSARI_API Linear : public Cloneable<Linear, Link> {
 public:
  // A layer configured by options.
  explicit Linear(const LinearOptions& options);
  // A layer from in_size to out_size features with the default options.
  Linear(int64_t in_size, int64_t out_size) : Linear(LinearOptions(in_size, out_size)) {}
  // x W^T + b; initialises W from x on the first call when the input size was left open.
  Variable forward(const Variable& x) override;
  // Number of outputs.
  int64_t out_size() const { return out_size_; }

 protected:
  std::string type_name() const override { return "Linear"; }

 private:
  int64_t out_size_;
};

}  // namespace kusari::links
