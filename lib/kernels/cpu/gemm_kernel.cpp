// CPU matrix product through OpenBLAS (which runs on the shared OpenMP pool); the half types are
// widened to float around an sgemm.

#include <cblas.h>

#include <kusari/core/kernel_table.h>

namespace kusari::kernels::cpu {
namespace {

// A 2-D operand as BLAS sees it: a row-major matrix, possibly read transposed.
struct BlasOperand {
  Array array;          // storage BLAS reads
  bool transpose;       // whether BLAS reads it transposed
  int64_t leading;      // leading dimension
};

// Uses the array's own layout when one of its axes has unit stride; copies otherwise.
BlasOperand as_blas(const Array& a, bool transpose) {
  const int64_t rows = a.shape()[0], cols = a.shape()[1];
  const int64_t s0 = a.strides()[0], s1 = a.strides()[1];
  if ((s1 == 1 || cols == 1) && s0 >= std::max<int64_t>(1, cols)) return {a, transpose, s0};
  if ((s0 == 1 || rows == 1) && s1 >= std::max<int64_t>(1, rows)) return {a, !transpose, s1};
  return {a.copy(), transpose, std::max<int64_t>(1, cols)};
}

template <class T>
void blas_gemm(const BlasOperand& a, const BlasOperand& b, int64_t m, int64_t n, int64_t k, double alpha,
               double beta, T* c, int64_t ldc) {
  const auto ta = a.transpose ? CblasTrans : CblasNoTrans;
  const auto tb = b.transpose ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, static_cast<const double*>(a.array.raw_data()), a.leading,
                static_cast<const double*>(b.array.raw_data()), b.leading, beta, c, ldc);
  } else {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, static_cast<float>(alpha),
                static_cast<const float*>(a.array.raw_data()), a.leading,
                static_cast<const float*>(b.array.raw_data()), b.leading, static_cast<float>(beta), c, ldc);
  }
}

void gemm_kernel(const Array& a, bool transpose_a, const Array& b, bool transpose_b, double alpha, double beta,
                 const Array& out) {
  const int64_t m = out.shape()[0], n = out.shape()[1];
  const int64_t k = transpose_a ? a.shape()[0] : a.shape()[1];
  if (m == 0 || n == 0) return;
  const Dtype dtype = out.dtype();
  if (dtype == Dtype::float32 || dtype == Dtype::float64) {
    const bool direct = out.strides()[1] == 1 && out.strides()[0] >= std::max<int64_t>(1, n);
    const Array c = direct ? out : out.copy();
    visit_floating_dtype(dtype, "gemm", [&]<class T>() {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        blas_gemm<T>(as_blas(a, transpose_a), as_blas(b, transpose_b), m, n, k, alpha, beta,
                     static_cast<T*>(c.raw_data()), c.strides()[0]);
      }
    });
    if (!direct) out.assign(c);
    return;
  }
  if (dtype != Dtype::float16 && dtype != Dtype::bfloat16) {
    throw DtypeError(cat("gemm: expected a floating dtype, got ", dtype));
  }
  const Array c = beta == 0 ? Array::empty(out.shape()) : out.astype(Dtype::float32, true);
  blas_gemm<float>(as_blas(a.astype(Dtype::float32), transpose_a), as_blas(b.astype(Dtype::float32), transpose_b), m,
                   n, k, alpha, beta, static_cast<float*>(c.raw_data()), n);
  out.assign(c);
}

const bool registered = [] {
  register_kernel<kernel_ops::Gemm>(DeviceType::cpu, gemm_kernel);
  return true;
}();

}  // namespace
}  // namespace kusari::kernels::cpu
