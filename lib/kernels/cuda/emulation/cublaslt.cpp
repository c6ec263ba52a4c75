// cuBLASLt's matrix product on the host, linked into libkusari by the host emulation (meson option
// cuda-emulation) in place of loading libcublasLt: the calls the backend's gemm makes. D = α·op(A)·op(B)
// + β·C on column-major layouts (rows, columns, leading dimension), each element summed in order in the
// operation's compute type (float for CUBLAS_COMPUTE_32F, double for 64F) and C left unread where β is
// 0, as cuBLASLt documents; the half types load as float and store rounded to nearest.

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <new>

#include <kusari/kernels/cuda/detail/emulated_streams.h>

namespace {

// What a matmul descriptor holds.
struct Operation {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  cublasOperation_t transpose_a = CUBLAS_OP_N, transpose_b = CUBLAS_OP_N;
};

// What a matrix layout holds.
struct Layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t leading;
};

static_assert(sizeof(Operation) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));

const Operation& operation_of(cublasLtMatmulDesc_t d) { return *std::launder(reinterpret_cast<const Operation*>(d)); }
Operation& operation_of_mutable(cublasLtMatmulDesc_t d) { return *std::launder(reinterpret_cast<Operation*>(d)); }
const Layout& layout_of(cublasLtMatrixLayout_t l) { return *std::launder(reinterpret_cast<const Layout*>(l)); }

// Whether cuBLASLt's products take this element type (float32, float64, float16, bfloat16).
bool supported(cudaDataType_t type) {
  return type == CUDA_R_32F || type == CUDA_R_64F || type == CUDA_R_16F || type == CUDA_R_16BF;
}

// Element `index` of a matrix of `type`, widened.
template <class A>
A load(const void* base, cudaDataType_t type, int64_t index) {
  switch (type) {
    case CUDA_R_32F: return static_cast<A>(static_cast<const float*>(base)[index]);
    case CUDA_R_64F: return static_cast<A>(static_cast<const double*>(base)[index]);
    case CUDA_R_16F: return static_cast<A>(__half2float(static_cast<const __half*>(base)[index]));
    default: return static_cast<A>(__bfloat162float(static_cast<const __nv_bfloat16*>(base)[index]));
  }
}

// Stores `value` as element `index` of a matrix of `type`.
template <class A>
void store(void* base, cudaDataType_t type, int64_t index, A value) {
  switch (type) {
    case CUDA_R_32F: static_cast<float*>(base)[index] = static_cast<float>(value); break;
    case CUDA_R_64F: static_cast<double*>(base)[index] = static_cast<double>(value); break;
    case CUDA_R_16F: static_cast<__half*>(base)[index] = __float2half_rn(static_cast<float>(value)); break;
    default: static_cast<__nv_bfloat16*>(base)[index] = __float2bfloat16_rn(static_cast<float>(value)); break;
  }
}

// The product in accumulator type A (the scale type's too): m x n results of k terms each.
template <class A>
void multiply(const Operation& op, A scale_product, const void* a, const Layout& la, const void* b, const Layout& lb,
              A scale_c, const void* c, const Layout& lc, void* d, const Layout& ld, int64_t m, int64_t n, int64_t k) {
  const bool ta = op.transpose_a == CUBLAS_OP_T, tb = op.transpose_b == CUBLAS_OP_T;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      A sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const A x = load<A>(a, la.type, ta ? p + i * la.leading : i + p * la.leading);
        const A y = load<A>(b, lb.type, tb ? j + p * lb.leading : p + j * lb.leading);
        sum += x * y;
      }
      A result = scale_product * sum;
      if (scale_c != A(0)) result += scale_c * load<A>(c, lc.type, i + j * lc.leading);
      store<A>(d, ld.type, i + j * ld.leading, result);
    }
  }
}

}  // namespace

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  static int context;
  *handle = reinterpret_cast<cublasLtHandle_t>(&context);
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasLtGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_INTERNAL_ERROR";
  }
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale) {
  const bool single = compute == CUBLAS_COMPUTE_32F && scale == CUDA_R_32F;
  const bool wide = compute == CUBLAS_COMPUTE_64F && scale == CUDA_R_64F;
  if (!single && !wide) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  *desc = new cublasLtMatmulDescOpaque_t{};
  new (*desc) Operation{compute, scale};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                              const void* value, size_t bytes) {
  if (bytes != sizeof(cublasOperation_t)) return CUBLAS_STATUS_INVALID_VALUE;
  const auto transpose = *static_cast<const cublasOperation_t*>(value);
  if (transpose != CUBLAS_OP_N && transpose != CUBLAS_OP_T) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (attribute == CUBLASLT_MATMUL_DESC_TRANSA) {
    operation_of_mutable(desc).transpose_a = transpose;
  } else if (attribute == CUBLASLT_MATMUL_DESC_TRANSB) {
    operation_of_mutable(desc).transpose_b = transpose;
  } else {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* preference) {
  *preference = new cublasLtMatmulPreferenceOpaque_t{};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) {
  delete preference;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
                                                    const void*, size_t) {
  return CUBLAS_STATUS_SUCCESS;  // the emulation's one algorithm takes any workspace and alignment
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t leading) {
  if (!supported(type)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (leading < static_cast<int64_t>(rows == 0 ? 1 : rows)) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{};
  new (*layout) Layout{type, rows, cols, leading};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t a,
                                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                              cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* count) {
  if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  const bool one_type = layout_of(a).type == layout_of(b).type && layout_of(b).type == layout_of(c).type &&
                        layout_of(c).type == layout_of(d).type;
  *count = one_type ? 1 : 0;
  if (one_type) results[0] = cublasLtMatmulHeuristicResult_t{};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void* alpha, const void* a,
                              cublasLtMatrixLayout_t a_layout, const void* b, cublasLtMatrixLayout_t b_layout,
                              const void* beta, const void* c, cublasLtMatrixLayout_t c_layout, void* d,
                              cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t*, void*, size_t,
                              cudaStream_t stream) {
  const Operation op = operation_of(desc);
  const Layout la = layout_of(a_layout), lb = layout_of(b_layout), lc = layout_of(c_layout), ld = layout_of(d_layout);
  const auto m = static_cast<int64_t>(ld.rows), n = static_cast<int64_t>(ld.cols);
  const bool ta = op.transpose_a == CUBLAS_OP_T, tb = op.transpose_b == CUBLAS_OP_T;
  const auto k = static_cast<int64_t>(ta ? la.rows : la.cols);
  const auto extent = [](uint64_t e) { return static_cast<int64_t>(e); };
  const bool fits = extent(ta ? la.cols : la.rows) == m && extent(tb ? lb.cols : lb.rows) == k &&
                    extent(tb ? lb.rows : lb.cols) == n && lc.rows == ld.rows && lc.cols == ld.cols;
  if (!fits) return CUBLAS_STATUS_INVALID_VALUE;
  // The scales are host values read at the call (cuBLASLt's default pointer mode).
  auto queue = [&]<class A>(A scale_product, A scale_c) {
    kusari::kernels::cuda::emulation::enqueue(stream, [=] {
      multiply<A>(op, scale_product, a, la, b, lb, scale_c, c, lc, d, ld, m, n, k);
    });
  };
  if (op.compute == CUBLAS_COMPUTE_64F) {
    queue(*static_cast<const double*>(alpha), *static_cast<const double*>(beta));
  } else {
    queue(*static_cast<const float*>(alpha), *static_cast<const float*>(beta));
  }
  return CUBLAS_STATUS_SUCCESS;
}
