#pragma once
// Internal to the CPU backend: oneDNN's engine and GEMM, and a oneDNN primitive made ready to run on
// kusari arrays in their plain layouts, with the reorders into and out of the layouts it chose.

#include <cstdint>
#include <optional>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace kusari::kernels::cpu {

// The CPU engine every oneDNN primitive of the process is made for.
const dnnl::engine& dnnl_engine();

// c = alpha·op(a)·op(b) + beta·c for row-major float matrices through oneDNN's GEMM ('N' or 'T' per
// operand); throws naming `op` and the extents if oneDNN reports a failure.
void onednn_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const char* op);

// Attributes every planned primitive is made with: its scratchpad comes from the caller (the pooled
// allocator), so one primitive may run in several threads at once.
dnnl::primitive_attr plan_attributes();

// One operand of a planned primitive: its execution argument (DNNL_ARG_*), the layout of the caller's
// memory, and whether the primitive writes it.
struct PlanOperand {
  int arg;
  dnnl::memory::desc user;
  bool output = false;
};

// A primitive and the reorders between its operands' plain layouts and the layouts it computes in.
class DnnlPlan {
 public:
  // Plans the primitive of `pd` (made with plan_attributes()) over `operands`.
  DnnlPlan(const dnnl::primitive_desc& pd, std::vector<PlanOperand> operands);
  // Runs the primitive with operand i at data[i] (in the order given to the constructor), reordering
  // through temporary buffers where the primitive's layout differs; returns when the results are written.
  void execute(const std::vector<void*>& data) const;

 private:
  struct Operand {
    PlanOperand plain;
    dnnl::memory::desc inner;            // the layout the primitive computes in
    std::optional<dnnl::reorder> convert;  // plain -> inner for inputs, inner -> plain for outputs
  };
  dnnl::primitive primitive_;
  std::vector<Operand> operands_;
  dnnl::memory::desc scratchpad_;
};

}  // namespace kusari::kernels::cpu
