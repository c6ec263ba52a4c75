// cuDNN's convolution passes on the host, for the emulation's cuDNN (detail/emulated_cudnn.h): each
// result element one sum, its terms in a fixed order, in the compute type.

#include <kusari/kernels/cuda/detail/emulated_cudnn.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <cstring>

#include <kusari/core/error.h>

namespace kusari::kernels::cuda::emulation {
namespace {

using Index = std::array<int64_t, 4>;

// `value` rounded to the nearest TF32 (10 bits of mantissa, ties to even), as a tensor core reads float32.
float to_tf32(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0xfffu + ((bits >> 13) & 1u)) & ~0x1fffu;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

// `value` rounded to `type` and widened back.
template <class A>
A rounded_to(cudnnDataType_t type, A value) {
  double element = 0;  // room for one element of any type
  store_element<A>(&element, type, 0, value);
  return load_element<A>(&element, type, 0);
}

// The element offset of `index` in t.
int64_t offset_of(const DnnTensor& t, const Index& index) {
  int64_t offset = 0;
  for (size_t i = 0; i < 4; ++i) offset += index[i] * t.strides[i];
  return offset;
}

// The sums of one pass in A, the compute type.
template <class A>
class Convolution {
 public:
  Convolution(const DnnTensor& x, const void* x_data, const DnnTensor& w, const void* w_data, const DnnTensor& y,
              const void* y_data, const DnnGeometry& g, DnnNumerics numerics)
      : x_(x), w_(w), y_(y), x_data_(x_data), w_data_(w_data), y_data_(y_data), g_(g), numerics_(numerics) {
    channels_per_group_ = w.extents[1];
    outputs_per_group_ = w.extents[0] / (x.extents[1] / channels_per_group_);
  }

  // y[n, k, p, q]'s sum.
  A forward(const Index& at) const {
    const int64_t group = at[1] / outputs_per_group_;
    A sum = 0;
    for (int64_t c = 0; c < channels_per_group_; ++c) {
      for (int64_t r = 0; r < w_.extents[2]; ++r) {
        const int64_t h = at[2] * g_.stride[0] - g_.pre_padding[0] + r * g_.dilation[0];
        if (h < 0 || h >= x_.extents[2]) continue;
        for (int64_t s = 0; s < w_.extents[3]; ++s) {
          const int64_t v = at[3] * g_.stride[1] - g_.pre_padding[1] + s * g_.dilation[1];
          if (v < 0 || v >= x_.extents[3]) continue;
          add(sum, x_at({at[0], group * channels_per_group_ + c, h, v}), w_at({at[1], c, r, s}));
        }
      }
    }
    return sum;
  }

  // x[n, c, h, v]'s gradient's sum.
  A backward_data(const Index& at) const {
    const int64_t group = at[1] / channels_per_group_, c = at[1] % channels_per_group_;
    A sum = 0;
    for (int64_t k = group * outputs_per_group_; k < (group + 1) * outputs_per_group_; ++k) {
      for (int64_t r = 0; r < w_.extents[2]; ++r) {
        const int64_t ph = at[2] + g_.pre_padding[0] - r * g_.dilation[0];
        if (ph < 0 || ph % g_.stride[0] != 0 || ph / g_.stride[0] >= y_.extents[2]) continue;
        for (int64_t s = 0; s < w_.extents[3]; ++s) {
          const int64_t qw = at[3] + g_.pre_padding[1] - s * g_.dilation[1];
          if (qw < 0 || qw % g_.stride[1] != 0 || qw / g_.stride[1] >= y_.extents[3]) continue;
          add(sum, y_at({at[0], k, ph / g_.stride[0], qw / g_.stride[1]}), w_at({k, c, r, s}));
        }
      }
    }
    return sum;
  }

  // w[k, c, r, s]'s gradient's sum.
  A backward_filter(const Index& at) const {
    const int64_t channel = (at[0] / outputs_per_group_) * channels_per_group_ + at[1];
    A sum = 0;
    for (int64_t n = 0; n < x_.extents[0]; ++n) {
      for (int64_t p = 0; p < y_.extents[2]; ++p) {
        const int64_t h = p * g_.stride[0] - g_.pre_padding[0] + at[2] * g_.dilation[0];
        if (h < 0 || h >= x_.extents[2]) continue;
        for (int64_t q = 0; q < y_.extents[3]; ++q) {
          const int64_t v = q * g_.stride[1] - g_.pre_padding[1] + at[3] * g_.dilation[1];
          if (v < 0 || v >= x_.extents[3]) continue;
          add(sum, y_at({n, at[0], p, q}), x_at({n, channel, h, v}));
        }
      }
    }
    return sum;
  }

 private:
  A x_at(const Index& i) const { return input(x_data_, x_, i); }
  A w_at(const Index& i) const { return input(w_data_, w_, i); }
  A y_at(const Index& i) const { return input(y_data_, y_, i); }

  // An operand's element as the engine reads it.
  A input(const void* data, const DnnTensor& t, const Index& i) const {
    const A value = load_element<A>(data, t.type, offset_of(t, i));
    return numerics_ == DnnNumerics::tf32_inputs && t.type == CUDNN_DATA_FLOAT
               ? static_cast<A>(to_tf32(static_cast<float>(value)))
               : value;
  }

  // sum += a · b, rounded as the engine's sums are.
  void add(A& sum, A a, A b) const {
    sum += a * b;
    if (numerics_ == DnnNumerics::sums_in_element_type) sum = rounded_to(x_.type, sum);
  }

  const DnnTensor &x_, &w_, &y_;
  const void *x_data_, *w_data_, *y_data_;
  const DnnGeometry& g_;
  DnnNumerics numerics_;
  int64_t channels_per_group_ = 1, outputs_per_group_ = 1;
};

// Runs the pass in compute type A.
template <class A>
void run(DnnPass pass, const DnnTensor& x, const void* x_data, const DnnTensor& w, const void* w_data,
         const DnnTensor& y, const void* y_data, const DnnGeometry& g, double alpha, double beta,
         DnnNumerics numerics, void* partials) {
  const Convolution<A> convolution(x, x_data, w, w_data, y, y_data, g, numerics);
  const DnnTensor& result = result_of(pass, x, w, y);
  void* result_data = const_cast<void*>(pass == DnnPass::forward ? y_data
                                        : pass == DnnPass::backward_data ? x_data
                                                                         : w_data);
  int64_t count = 1;
  for (const int64_t e : result.extents) count *= e;
  std::vector<A> own;
  A* sums = static_cast<A*>(partials);
  if (sums == nullptr) {
    own.resize(static_cast<size_t>(count));
    sums = own.data();
  }
  // Every sum first, then every store: the pass reads none of what it writes.
  const auto each = [&](auto&& body) {
    int64_t i = 0;
    for (int64_t a = 0; a < result.extents[0]; ++a)
      for (int64_t b = 0; b < result.extents[1]; ++b)
        for (int64_t c = 0; c < result.extents[2]; ++c)
          for (int64_t d = 0; d < result.extents[3]; ++d) body(Index{a, b, c, d}, i++);
  };
  each([&](const Index& at, int64_t i) {
    sums[i] = pass == DnnPass::forward         ? convolution.forward(at)
              : pass == DnnPass::backward_data ? convolution.backward_data(at)
                                               : convolution.backward_filter(at);
  });
  each([&](const Index& at, int64_t i) {
    const int64_t offset = offset_of(result, at);
    A value = static_cast<A>(alpha) * sums[i];
    if (beta != 0) value += static_cast<A>(beta) * load_element<A>(result_data, result.type, offset);
    store_element<A>(result_data, result.type, offset, value);
  });
}

}  // namespace

size_t DnnTensor::span_bytes() const {
  int64_t last = 0;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] == 0) return 0;
    last += (extents[i] - 1) * strides[i];
  }
  return static_cast<size_t>(last + 1) * element_bytes(type);
}

const DnnTensor& result_of(DnnPass pass, const DnnTensor& x, const DnnTensor& w, const DnnTensor& y) {
  return pass == DnnPass::forward ? y : pass == DnnPass::backward_data ? x : w;
}

size_t partials_bytes(DnnPass pass, const DnnTensor& x, const DnnTensor& w, const DnnTensor& y,
                      const DnnGeometry& geometry) {
  size_t count = 1;
  for (const int64_t e : result_of(pass, x, w, y).extents) count *= static_cast<size_t>(e);
  return count * (geometry.compute == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float));
}

size_t element_bytes(cudnnDataType_t type) {
  switch (type) {
    case CUDNN_DATA_FLOAT: return 4;
    case CUDNN_DATA_DOUBLE: return 8;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16: return 2;
    default: return 0;
  }
}

std::string convolution_mismatch(const DnnTensor& x, const DnnTensor& w, const DnnTensor& y,
                                 const DnnGeometry& g) {
  for (const DnnTensor* t : {&x, &w, &y}) {
    if (t->extents.size() != 4 || t->strides.size() != 4) return "the emulation takes 4-D tensors only";
    for (size_t i = 0; i < 4; ++i) {
      if (t->extents[i] < 1 || t->strides[i] < 0) {
        return cat("expected extents of at least 1 and strides of at least 0, got extent ", t->extents[i],
                   " and stride ", t->strides[i]);
      }
    }
  }
  if (x.type != w.type || x.type != y.type) return "operands of different element types";
  if (element_bytes(x.type) == 0) return "an element type the emulation does not take";
  const cudnnDataType_t compute = x.type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  if (g.compute != compute) return "a compute type the element type does not take";
  if (x.extents[1] % w.extents[1] != 0) {
    return cat("x's ", x.extents[1], " channels are not groups of w's ", w.extents[1]);
  }
  const int64_t groups = x.extents[1] / w.extents[1];
  if (w.extents[0] % groups != 0) return cat(w.extents[0], " filters do not divide into ", groups, " groups");
  if (y.extents[0] != x.extents[0] || y.extents[1] != w.extents[0]) {
    return cat("y's batch or channels (", y.extents[0], ", ", y.extents[1], ") are not x's batch and w's filters");
  }
  for (size_t axis = 0; axis < 2; ++axis) {
    if (g.stride[axis] < 1 || g.dilation[axis] < 1 || g.pre_padding[axis] < 0 || g.post_padding[axis] < 0) {
      return "a stride or dilation below 1 or a negative padding";
    }
    const int64_t reach = x.extents[2 + axis] + g.pre_padding[axis] + g.post_padding[axis] -
                          ((w.extents[2 + axis] - 1) * g.dilation[axis] + 1);
    const int64_t output = reach < 0 ? 0 : reach / g.stride[axis] + 1;
    if (y.extents[2 + axis] != output) {
      return cat("spatial axis ", axis, ": expected an output extent of ", output, ", got ", y.extents[2 + axis]);
    }
  }
  return "";
}

std::string aliasing(DnnPass pass, const DnnTensor& x, const void* x_data, const DnnTensor& w, const void* w_data,
                     const DnnTensor& y, const void* y_data, const void* workspace, size_t workspace_bytes) {
  struct Span {
    const DnnTensor* tensor;  // null for the workspace
    const char* first;
    size_t bytes;
    const char* name;
  };
  const Span spans[] = {{&x, static_cast<const char*>(x_data), x.span_bytes(), "x"},
                        {&w, static_cast<const char*>(w_data), w.span_bytes(), "w"},
                        {&y, static_cast<const char*>(y_data), y.span_bytes(), "y"},
                        {nullptr, static_cast<const char*>(workspace), workspace_bytes, "the workspace"}};
  const DnnTensor* written = &result_of(pass, x, w, y);
  const Span& result =
      *std::find_if(std::begin(spans), std::end(spans), [&](const Span& s) { return s.tensor == written; });
  for (const Span& other : spans) {
    if (&other == &result || other.first == nullptr || other.bytes == 0 || result.bytes == 0) continue;
    if (result.first < other.first + other.bytes && other.first < result.first + result.bytes) {
      return cat("the result ", result.name, " overlaps ", other.name, " (cuDNN does not compute in place)");
    }
  }
  return "";
}

void convolve(DnnPass pass, const DnnTensor& x, const void* x_data, const DnnTensor& w, const void* w_data,
              const DnnTensor& y, const void* y_data, const DnnGeometry& geometry, double alpha, double beta,
              DnnNumerics numerics, void* partials) {
  if (geometry.compute == CUDNN_DATA_DOUBLE) {
    run<double>(pass, x, x_data, w, w_data, y, y_data, geometry, alpha, beta, numerics, partials);
  } else {
    run<float>(pass, x, x_data, w, w_data, y, y_data, geometry, alpha, beta, numerics, partials);
  }
}

}  // namespace kusari::kernels::cuda::emulation
