// CUDA matrix product through cuBLASLt: float32 and float64 in their own precision (TF32 is never
// used), float16 and bfloat16 with float32 accumulation on the tensor cores. A row-major product
// C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B goes first. Each shape's plan (the
// descriptors and the algorithm cuBLASLt's heuristic picks) is made once per device and kept.

#include <cublasLt.h>

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/cuda/detail/runtime_library.h>
#include <kusari/kernels/cuda/detail/streams.h>
#include <kusari/kernels/detail/matrix_operand.h>
#include <kusari/kernels/ops/linalg.h>
#include <kusari/kernels/routines.h>

namespace kusari::kernels::cuda {
namespace {

// The cuBLASLt functions the products call, from libcublasLt loaded on first use (runtime_library.h).
struct CublasLt {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtGetStatusString) status_string = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  std::string missing;  // why cuBLASLt is unusable ("" when loaded)
};

#if defined(KUSARI_CUDA_EMULATION)
// The host emulation's cuBLASLt, linked into libkusari (emulation/cublaslt.cpp).
const CublasLt& cublaslt() {
  static const CublasLt linked{cublasLtCreate,
                               cublasLtGetStatusString,
                               cublasLtMatmul,
                               cublasLtMatmulAlgoGetHeuristic,
                               cublasLtMatmulDescCreate,
                               cublasLtMatmulDescDestroy,
                               cublasLtMatmulDescSetAttribute,
                               cublasLtMatmulPreferenceCreate,
                               cublasLtMatmulPreferenceDestroy,
                               cublasLtMatmulPreferenceSetAttribute,
                               cublasLtMatrixLayoutCreate,
                               cublasLtMatrixLayoutDestroy,
                               ""};
  return linked;
}
#else
// libcublasLt of the major version kusari was built against; throws DeviceError saying why it cannot
// be used (asked only by a product on a CUDA device).
const CublasLt& cublaslt() {
  static const CublasLt loaded = [] {
    CublasLt c;
    const std::string file = cat("libcublasLt.so.", CUBLAS_VER_MAJOR);
    detail::RuntimeLibrary library = detail::open_runtime_library({file.c_str()});
    library.resolve("cublasLtCreate", c.create);
    library.resolve("cublasLtGetStatusString", c.status_string);
    library.resolve("cublasLtMatmul", c.matmul);
    library.resolve("cublasLtMatmulAlgoGetHeuristic", c.heuristic);
    library.resolve("cublasLtMatmulDescCreate", c.desc_create);
    library.resolve("cublasLtMatmulDescDestroy", c.desc_destroy);
    library.resolve("cublasLtMatmulDescSetAttribute", c.desc_set);
    library.resolve("cublasLtMatmulPreferenceCreate", c.preference_create);
    library.resolve("cublasLtMatmulPreferenceDestroy", c.preference_destroy);
    library.resolve("cublasLtMatmulPreferenceSetAttribute", c.preference_set);
    library.resolve("cublasLtMatrixLayoutCreate", c.layout_create);
    library.resolve("cublasLtMatrixLayoutDestroy", c.layout_destroy);
    c.missing = library.missing;
    return c;
  }();
  if (!loaded.missing.empty()) throw DeviceError(cat("cuBLASLt: ", loaded.missing));
  return loaded;
}
#endif

// Throws DeviceError "<what>: <cuBLASLt's message>" unless status is CUBLAS_STATUS_SUCCESS.
void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw DeviceError(cat(what, ": ", cublaslt().status_string(status)));
}

// Workspace per device that cuBLASLt's algorithms may use (what NVIDIA advises for Hopper).
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

// What identifies a plan: dtype, transposes, sizes, leading dimensions, and the operands' alignments
// (an algorithm chosen for aligned pointers may not run on others).
using PlanKey = std::tuple<Dtype, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, int, int>;

// One shape's descriptors and algorithm.
struct Plan {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, result = nullptr;
  cublasLtMatmulAlgo_t algorithm{};
};

// A device's cuBLASLt handle and plans, made on first use and kept for the process's life (each call's
// workspace comes from the caching allocator, on the stream the call runs on).
struct DeviceBlas {
  std::once_flag once;
  cublasLtHandle_t handle = nullptr;
  std::mutex mutex;
  std::map<PlanKey, Plan> plans;
};

DeviceBlas& blas_of(int index) {
  static std::array<DeviceBlas, kMaxDevices> all;
  DeviceBlas& b = all[static_cast<size_t>(index)];
  std::call_once(b.once, [&] {
    DeviceGuard guard(index);
    check_blas(cublaslt().create(&b.handle), "cublasLtCreate");
  });
  return b;
}

// The largest power of two up to 256 that divides the address (cuBLASLt's alignment preferences).
int alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  int alignment = 256;
  while (alignment > 1 && address % static_cast<uintptr_t>(alignment) != 0) alignment /= 2;
  return alignment;
}

cudaDataType_t data_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32:
      return CUDA_R_32F;
    case Dtype::float64:
      return CUDA_R_64F;
    case Dtype::float16:
      return CUDA_R_16F;
    case Dtype::bfloat16:
      return CUDA_R_16BF;
    default:
      throw DtypeError(cat("gemm: expected a floating dtype, got ", dtype));
  }
}

// The column-major layout of a row-major operand's storage: its rows become columns.
cublasLtMatrixLayout_t column_major_layout(cudaDataType_t type, int64_t row_major_rows, int64_t row_major_cols,
                                           int64_t leading) {
  cublasLtMatrixLayout_t layout;
  check_blas(cublaslt().layout_create(&layout, type, static_cast<uint64_t>(row_major_cols),
                                        static_cast<uint64_t>(row_major_rows), leading),
             "cublasLtMatrixLayoutCreate");
  return layout;
}

// Destroys what a plan holds.
void destroy(const Plan& plan) {
  if (plan.operation) cublaslt().desc_destroy(plan.operation);
  for (cublasLtMatrixLayout_t layout : {plan.first, plan.second, plan.result}) {
    if (layout) cublaslt().layout_destroy(layout);
  }
}

// Fills `plan` for C (m x n, row-major, rows ldc apart) = op(a) (m x k) · op(b) (k x n).
void fill_plan(Plan& plan, DeviceBlas& blas, Dtype dtype, const MatrixOperand& a, const MatrixOperand& b, int64_t m,
               int64_t n, int64_t k, int64_t ldc, const std::array<int, 3>& alignments) {
  const cudaDataType_t type = data_type(dtype);
  const bool wide = dtype == Dtype::float64;
  check_blas(cublaslt().desc_create(&plan.operation, wide ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                                      wide ? CUDA_R_64F : CUDA_R_32F),
             "cublasLtMatmulDescCreate");
  // cuBLAS's first operand is b's storage, read transposed exactly when b's row-major storage is not.
  const cublasOperation_t first_op = b.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t second_op = a.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_blas(cublaslt().desc_set(plan.operation, CUBLASLT_MATMUL_DESC_TRANSA, &first_op, sizeof(first_op)),
             "cublasLtMatmulDescSetAttribute");
  check_blas(cublaslt().desc_set(plan.operation, CUBLASLT_MATMUL_DESC_TRANSB, &second_op, sizeof(second_op)),
             "cublasLtMatmulDescSetAttribute");
  // Row-major storage shapes: b's is k x n (n x k when read transposed), a's m x k (k x m).
  plan.first = column_major_layout(type, b.transpose ? n : k, b.transpose ? k : n, b.leading);
  plan.second = column_major_layout(type, a.transpose ? k : m, a.transpose ? m : k, a.leading);
  plan.result = column_major_layout(type, m, n, ldc);

  cublasLtMatmulPreference_t preference;
  check_blas(cublaslt().preference_create(&preference), "cublasLtMatmulPreferenceCreate");
  const size_t workspace = kWorkspaceBytes;
  const uint32_t align_a = static_cast<uint32_t>(alignments[1]), align_b = static_cast<uint32_t>(alignments[0]),
                 align_c = static_cast<uint32_t>(alignments[2]);
  cublaslt().preference_set(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof(workspace));
  cublaslt().preference_set(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b,
                                       sizeof(align_b));
  cublaslt().preference_set(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a,
                                       sizeof(align_a));
  cublaslt().preference_set(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c,
                                       sizeof(align_c));
  cublaslt().preference_set(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c,
                                       sizeof(align_c));
  cublasLtMatmulHeuristicResult_t found{};
  int count = 0;
  const cublasStatus_t status = cublaslt().heuristic(blas.handle, plan.operation, plan.first, plan.second,
                                                               plan.result, plan.result, preference, 1, &found, &count);
  cublaslt().preference_destroy(preference);
  check_blas(status, "cublasLtMatmulAlgoGetHeuristic");
  if (count == 0) {
    throw DeviceError(cat("gemm: cuBLASLt has no algorithm for ", dtype, " (", m, " x ", k, ") @ (", k, " x ", n,
                          ") with leading dimensions ", a.leading, ", ", b.leading, ", ", ldc));
  }
  plan.algorithm = found.algo;
}

// The plan of that product; nothing is left behind when making it fails.
Plan make_plan(DeviceBlas& blas, Dtype dtype, const MatrixOperand& a, const MatrixOperand& b, int64_t m, int64_t n,
               int64_t k, int64_t ldc, const std::array<int, 3>& alignments) {
  Plan plan;
  try {
    fill_plan(plan, blas, dtype, a, b, m, n, k, ldc, alignments);
  } catch (...) {
    destroy(plan);
    throw;
  }
  return plan;
}

void gemm_kernel(const Array& a, bool transpose_a, const Array& b, bool transpose_b, double alpha, double beta,
                 const Array& out) {
  const Device device = out.device();
  require_device(device, "gemm");
  for (const Array* operand : {&a, &b}) {
    if (!(operand->device() == device)) {
      throw DeviceError(cat("gemm: expected every operand on ", device, ", got one on ", operand->device()));
    }
  }
  const int64_t m = out.shape()[0], n = out.shape()[1];
  const int64_t k = transpose_a ? a.shape()[0] : a.shape()[1];
  if (m == 0 || n == 0) return;
  const Dtype dtype = out.dtype();
  data_type(dtype);              // refuses the integer dtypes before any work
  if (k == 0 || alpha == 0.0) {  // no product to add: out = beta * out (not read when beta is 0)
    if (beta == 0.0) {
      out.fill(0.0);
    } else {
      out.assign(ops::mul(out, Array::scalar(beta, out.dtype(), out.device())));  // beta * inf stays inf
    }
    return;
  }
  const MatrixOperand first = as_matrix_operand(b, transpose_b), second = as_matrix_operand(a, transpose_a);
  const bool direct = writable_in_place(out);
  const Array c = direct ? out : out.copy();
  const int64_t ldc = c.strides()[0];
  const std::array<int, 3> alignments = {alignment_of(first.array.raw_data()), alignment_of(second.array.raw_data()),
                                         alignment_of(c.raw_data())};
  DeviceGuard guard(device.index);
  DeviceBlas& blas = blas_of(device.index);
  std::lock_guard lock(blas.mutex);
  const PlanKey key{dtype,         second.transpose, first.transpose, m, n, k, second.leading, first.leading, ldc,
                    alignments[0], alignments[1],    alignments[2]};
  auto it = blas.plans.find(key);
  if (it == blas.plans.end()) {
    it = blas.plans.emplace(key, make_plan(blas, dtype, second, first, m, n, k, ldc, alignments)).first;
  }
  const Plan& plan = it->second;
  const Array workspace = Array::empty({static_cast<int64_t>(kWorkspaceBytes)}, Dtype::uint8, device);
  const float alpha32 = static_cast<float>(alpha), beta32 = static_cast<float>(beta);
  const bool wide = dtype == Dtype::float64;
  check_blas(
      cublaslt().matmul(blas.handle, plan.operation, wide ? static_cast<const void*>(&alpha) : &alpha32,
                     first.array.raw_data(), plan.first, second.array.raw_data(), plan.second,
                     wide ? static_cast<const void*>(&beta) : &beta32, c.raw_data(), plan.result, c.raw_data(),
                     plan.result, &plan.algorithm, workspace.raw_data(), kWorkspaceBytes, current_stream(device.index)),
      "cublasLtMatmul");
  if (!direct) out.assign(c);
}

}  // namespace

void register_linalg_kernels() { install_kernel<kernel_ops::Gemm>(DeviceType::cuda, "cuda", gemm_kernel); }

}  // namespace kusari::kernels::cuda
