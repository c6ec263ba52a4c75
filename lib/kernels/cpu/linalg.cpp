// CPU matrix product through OpenBLAS or oneDNN's sgemm (both run on the shared OpenMP pool); the half
// types are widened to float around an sgemm. float32/float64 products of at most a couple of thousand
// multiply-adds run as a plain loop instead, where the call into BLAS costs more than the arithmetic.

#include <algorithm>

#include <cblas.h>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/detail/matrix_operand.h>
#include <kusari/kernels/ops/linalg.h>
#include <kusari/kernels/cpu/detail/registration.h>
#include <kusari/kernels/cpu/detail/dnnl_plan.h>

namespace kusari::kernels::cpu {
namespace {

// float32 products of at least this many multiply-adds go to oneDNN's sgemm, smaller ones to OpenBLAS.
// Measured on 1 and 2 threads (bench-style loops over each call): OpenBLAS is faster up to 16x16x100
// (0.26 against 0.52 us), the two tie at 100x16x16, and oneDNN is 1.1-1.4x faster from 32x32x32 up to
// the MLP's 100x1000x784 and ResNet-50's 784x3136x64 (2.2x at 128x64x576 on 2 threads).
constexpr int64_t kOneDnnFrom = 32 * 32 * 32;

template <class T>
void blas_gemm(const MatrixOperand& a, const MatrixOperand& b, int64_t m, int64_t n, int64_t k, double alpha,
               double beta, T* c, int64_t ldc) {
  const auto ta = a.transpose ? CblasTrans : CblasNoTrans;
  const auto tb = b.transpose ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, static_cast<const double*>(a.array.raw_data()), a.leading,
                static_cast<const double*>(b.array.raw_data()), b.leading, beta, c, ldc);
  } else if (m * n * k < kOneDnnFrom) {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, static_cast<float>(alpha),
                static_cast<const float*>(a.array.raw_data()), a.leading,
                static_cast<const float*>(b.array.raw_data()), b.leading, static_cast<float>(beta), c, ldc);
  } else {
    onednn_sgemm(a.transpose ? 'T' : 'N', b.transpose ? 'T' : 'N', m, n, k, static_cast<float>(alpha),
                 static_cast<const float*>(a.array.raw_data()), a.leading,
                 static_cast<const float*>(b.array.raw_data()), b.leading, static_cast<float>(beta), c, ldc, "gemm");
  }
}

// Products of at most this many multiply-adds take the plain loop. Measured against 1-thread OpenBLAS
// plus the operand setup around its call, on (m, n, k) = 1x16x16, 4x16x16, 8x16x16, 16x16x1 and
// 16x1x16 with every transpose: the loop wins or ties up to 8x16x16, OpenBLAS wins from 16x16x16 on.
constexpr int64_t kDirectLimit = 2048;

// A 2-D operand as the plain loop reads it: element (r, c) of op(a) is data[r * row + c * column].
template <class T>
struct MatrixView {
  const T* data;
  int64_t row, column;
};

// The view of op(a): a itself, or its transpose when `transpose` is set.
template <class T>
MatrixView<T> view_of(const Array& a, bool transpose) {
  const int64_t s0 = a.strides()[0], s1 = a.strides()[1];
  return {static_cast<const T*>(a.raw_data()), transpose ? s1 : s0, transpose ? s0 : s1};
}

// out[j * out_step] = alpha * sums[j], plus beta times its old value when beta is nonzero (only then is
// out read, as BLAS does).
template <class T>
inline void store_block(const T* sums, int64_t width, T alpha, T beta, T* out, int64_t out_step) {
  if (beta == T(0)) {
    for (int64_t j = 0; j < width; ++j) out[j * out_step] = alpha * sums[j];
  } else {
    for (int64_t j = 0; j < width; ++j) out[j * out_step] = alpha * sums[j] + beta * out[j * out_step];
  }
}

// kWidth consecutive outputs of one row: sums[j] = Σ_p a_row[p * a_step] · rows[p * ld + j], accumulated
// in registers (one vector when kWidth fills one), then stored through store_block.
template <class T, int64_t kWidth>
inline void row_block(const T* __restrict a_row, int64_t a_step, const T* __restrict rows, int64_t ld, int64_t k,
                      T alpha, T beta, T* __restrict out) {
  T sums[kWidth] = {};
  for (int64_t p = 0; p < k; ++p) {
    const T scale = a_row[p * a_step];
    const T* row = rows + p * ld;
    for (int64_t j = 0; j < kWidth; ++j) sums[j] += scale * row[j];
  }
  store_block(sums, kWidth, alpha, beta, out, 1);
}

// c = alpha * a @ b + beta * c for an m x k view a, a k x n view b and c's element (i, j) at
// c[i * c_row + j * c_column]; products with k <= 0 or alpha = 0 read neither a nor b. Full blocks of
// columns run as row_block over b's rows (packed first when they are not contiguous); the columns left
// over, and outputs that are not contiguous along a row, are plain dot products.
template <class T>
void direct_gemm(MatrixView<T> a, MatrixView<T> b, int64_t m, int64_t n, int64_t k, T alpha, T beta, T* c,
                 int64_t c_row, int64_t c_column) {
  constexpr int64_t kWidth = 64 / static_cast<int64_t>(sizeof(T));
  if (alpha == T(0)) k = 0;
  const bool blocks = c_column == 1 && n >= kWidth;
  alignas(64) T packed[kDirectLimit];
  const T* rows = b.data;
  int64_t ld = b.row;
  if (blocks && b.column != 1) {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) packed[p * n + j] = b.data[p * b.row + j * b.column];
    }
    rows = packed;
    ld = n;
  }
  for (int64_t i = 0; i < m; ++i) {
    const T* a_row = a.data + i * a.row;
    T* c_start = c + i * c_row;
    int64_t j = 0;
    if (blocks) {
      for (; j + kWidth <= n; j += kWidth) {
        row_block<T, kWidth>(a_row, a.column, rows + j, ld, k, alpha, beta, c_start + j);
      }
    }
    for (; j < n; ++j) {
      const T* b_column = b.data + j * b.column;
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a_row[p * a.column] * b_column[p * b.row];
      store_block(&sum, 1, alpha, beta, c_start + j * c_column, 1);
    }
  }
}

void gemm_kernel(const Array& a, bool transpose_a, const Array& b, bool transpose_b, double alpha, double beta,
                 const Array& out) {
  const int64_t m = out.shape()[0], n = out.shape()[1];
  const int64_t k = transpose_a ? a.shape()[0] : a.shape()[1];
  if (m == 0 || n == 0) return;
  const Dtype dtype = out.dtype();
  if ((dtype == Dtype::float32 || dtype == Dtype::float64) && m * n * k <= kDirectLimit) {
    visit_floating_dtype(dtype, "gemm", [&]<class T>() {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        direct_gemm<T>(view_of<T>(a, transpose_a), view_of<T>(b, transpose_b), m, n, k, static_cast<T>(alpha),
                       static_cast<T>(beta), static_cast<T*>(out.raw_data()), out.strides()[0], out.strides()[1]);
      }
    });
    return;
  }
  if (dtype == Dtype::float32 || dtype == Dtype::float64) {
    const bool direct = writable_in_place(out);
    const Array c = direct ? out : out.copy();
    visit_floating_dtype(dtype, "gemm", [&]<class T>() {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        blas_gemm<T>(as_matrix_operand(a, transpose_a), as_matrix_operand(b, transpose_b), m, n, k, alpha, beta,
                     static_cast<T*>(c.raw_data()), c.strides()[0]);
      }
    });
    if (!direct) out.assign(c);
    return;
  }
  if (dtype != Dtype::float16 && dtype != Dtype::bfloat16) {
    throw DtypeError(cat("gemm: expected a floating dtype, got ", dtype));
  }
  const Array c = beta == 0 ? Array::empty(out.shape(), Dtype::float32, Device::cpu()) : out.astype(Dtype::float32, true);
  blas_gemm<float>(as_matrix_operand(a.astype(Dtype::float32), transpose_a),
                   as_matrix_operand(b.astype(Dtype::float32), transpose_b), m, n, k, alpha, beta,
                   static_cast<float*>(c.raw_data()), n);
  out.assign(c);
}

}  // namespace

void register_linalg_kernels() {
  install_kernel<kernel_ops::Gemm>(DeviceType::cpu, "cpu", gemm_kernel);
}

}  // namespace kusari::kernels::cpu
