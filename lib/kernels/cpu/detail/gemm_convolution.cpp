// One column matrix per image (im2col.h) multiplied by the filters through the Gemm kernel, one GEMM per
// group. Images are spread over the thread pool (each thread's GEMMs then run on one core; a single image
// leaves the threads to BLAS).

#include <kusari/kernels/cpu/detail/gemm_convolution.h>

#include <algorithm>

#include <kusari/core/kernel_table.h>
#include <kusari/core/parallel.h>
#include <kusari/kernels/ops/linalg.h>
#include <kusari/kernels/cpu/detail/im2col.h>
#include <kusari/kernels/cpu/detail/strided_loop.h>

namespace kusari::kernels::cpu {
namespace {

// The (rows, cols) row-major block of contiguous `a` that starts `offset` elements past its first element.
Array block(const Array& a, int64_t offset, int64_t rows, int64_t cols) {
  return a.as_strided(Shape{rows, cols}, {cols, 1}, a.offset() + offset);
}

// Sizes shared by the three kernels, read from x (N, C, H, W), w (O, C/groups, kh, kw), y (N, O, oh, ow).
struct ConvSizes {
  ColumnLayout image;
  int64_t batch, out_channels;
  int64_t group_out;   // O / groups: output channels of one group
  int64_t group_rows;  // C / groups * kh * kw: column rows of one group

  ConvSizes(const Shape& x, const Shape& w, const Shape& y, const Conv2dGeometry& g)
      : image{x[1], x[2], x[3], w[2], w[3], y[2], y[3], g},
        batch(x[0]),
        out_channels(w[0]),
        group_out(w[0] / g.groups),
        group_rows(w[1] * w[2] * w[3]) {}
  // Elements of one input image.
  int64_t image_size() const { return image.channels * image.height * image.width; }
  // Elements of one output image.
  int64_t output_size() const { return out_channels * image.cols(); }
  // Group `group`'s filters as a (group_out, group_rows) matrix.
  Array filters(const Array& w, int64_t group) const {
    return block(w, group * group_out * group_rows, group_out, group_rows);
  }
  // Group `group`'s rows of a column matrix.
  Array columns(const Array& col, int64_t group) const {
    return block(col, group * group_rows * image.cols(), group_rows, image.cols());
  }
  // Group `group`'s channels of output image n as a (group_out, oh * ow) matrix.
  Array outputs(const Array& y, int64_t n, int64_t group) const {
    return block(y, n * output_size() + group * group_out * image.cols(), group_out, image.cols());
  }
  // Image n of x as its column matrix: x itself for an identity layout, else im2col written to `col`.
  Array column_matrix(const Array& x, int64_t n, const Array& col) const {
    if (image.is_identity()) return block(x, n * image_size(), image.rows(), image.cols());
    im2col(static_cast<const double*>(x.raw_data()) + n * image_size(), image, static_cast<double*>(col.raw_data()));
    return col;
  }
  // Images per parallel task: enough that a task does at least kGrain multiply-adds.
  int64_t image_grain() const {
    return std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_channels * group_rows * image.cols()));
  }
  // Scratch space for one column matrix (undefined when the layout is the identity).
  Array column_buffer() const {
    return image.is_identity() ? Array() : Array::empty(Shape{image.rows(), image.cols()}, Dtype::float64, Device::cpu());
  }
};

// Adds bias[c] to every element of channel c of one contiguous (channels, plane) image.
void add_channel_bias(const Array& bias, int64_t plane, double* image) {
  const double* b = static_cast<const double*>(bias.raw_data());
  for (int64_t c = 0; c < bias.size(); ++c) {
    for (int64_t i = 0; i < plane; ++i) image[c * plane + i] += b[c];
  }
}

}  // namespace

void gemm_conv2d(const Array& x, const Array& w, const Array& b, const Conv2dGeometry& g, const Array& y) {
  const ConvSizes s(x.shape(), w.shape(), y.shape(), g);
  auto gemm = kernel_for<kernel_ops::Gemm>(Device::cpu());
  parallel_for(s.batch, s.image_grain(), [&](int64_t begin, int64_t end) {
    const Array col = s.column_buffer();
    for (int64_t n = begin; n < end; ++n) {
      const Array columns = s.column_matrix(x, n, col);
      for (int64_t group = 0; group < g.groups; ++group) {
        gemm(s.filters(w, group), false, s.columns(columns, group), false, 1, 0, s.outputs(y, n, group));
      }
      if (b.defined()) add_channel_bias(b, s.image.cols(), static_cast<double*>(y.raw_data()) + n * s.output_size());
    }
  });
}

void gemm_conv2d_backward_data(const Array& gy, const Array& w, const Array& b, const Conv2dGeometry& g,
                               const Array& gx) {
  const ConvSizes s(gx.shape(), w.shape(), gy.shape(), g);
  auto gemm = kernel_for<kernel_ops::Gemm>(Device::cpu());
  parallel_for(s.batch, s.image_grain(), [&](int64_t begin, int64_t end) {
    const Array col = s.column_buffer();
    for (int64_t n = begin; n < end; ++n) {
      double* image = static_cast<double*>(gx.raw_data()) + n * s.image_size();
      const Array columns = col.defined() ? col : block(gx, n * s.image_size(), s.image.rows(), s.image.cols());
      for (int64_t group = 0; group < g.groups; ++group) {
        gemm(s.filters(w, group), true, s.outputs(gy, n, group), false, 1, 0, s.columns(columns, group));
      }
      if (col.defined()) col2im(static_cast<const double*>(col.raw_data()), s.image, image);
      if (b.defined()) add_channel_bias(b, s.image.height * s.image.width, image);
    }
  });
}

// Each chunk of the batch (at most one per thread) accumulates its own filter gradient; the partial sums
// are then added in chunk order, so the result does not depend on thread timing.
void gemm_conv2d_backward_filter(const Array& x, const Array& gy, const Conv2dGeometry& g, const Array& gw) {
  const ConvSizes s(x.shape(), gw.shape(), gy.shape(), g);
  auto gemm = kernel_for<kernel_ops::Gemm>(Device::cpu());
  const int64_t chunks = std::clamp<int64_t>(s.batch / s.image_grain(), 1, get_num_threads());
  const int64_t filter_size = gw.size();
  const Array partial = chunks == 1 ? gw : Array::empty(Shape{chunks, filter_size}, Dtype::float64, Device::cpu());
  parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
    const Array col = s.column_buffer();
    for (int64_t chunk = begin; chunk < end; ++chunk) {
      const Array sum = block(partial, chunk * filter_size, s.out_channels, s.group_rows);
      std::fill_n(static_cast<double*>(sum.raw_data()), filter_size, 0.0);
      for (int64_t n = s.batch * chunk / chunks; n < s.batch * (chunk + 1) / chunks; ++n) {
        const Array columns = s.column_matrix(x, n, col);
        for (int64_t group = 0; group < g.groups; ++group) {
          gemm(s.outputs(gy, n, group), false, s.columns(columns, group), true, 1, 1, s.filters(sum, group));
        }
      }
    }
  });
  if (chunks == 1) return;
  const double* parts = static_cast<const double*>(partial.raw_data());
  double* total = static_cast<double*>(gw.raw_data());
  for (int64_t i = 0; i < filter_size; ++i) {
    double acc = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) acc += parts[chunk * filter_size + i];
    total[i] = acc;
  }
}

}  // namespace kusari::kernels::cpu
