#include <kusari/kernels/cpu/detail/dnnl_plan.h>

#include <unordered_map>

#include <kusari/core/array.h>

namespace kusari::kernels::cpu {
namespace {

// A buffer of `desc`'s size from the pooled allocator, and oneDNN memory over it.
struct Buffer {
  Array storage;
  dnnl::memory memory;

  explicit Buffer(const dnnl::memory::desc& desc)
      : storage(Array::empty(Shape{static_cast<int64_t>(desc.get_size())}, Dtype::uint8, Device::cpu())),
        memory(desc, dnnl_engine(), storage.raw_data()) {}
};

// The stream primitives run on in the calling thread (a CPU stream is cheap but not shareable across threads).
dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(dnnl_engine());
  return stream;
}

}  // namespace

const dnnl::engine& dnnl_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void onednn_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const char* op) {
  const dnnl::status status = dnnl::sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl::status::success) {
    throw Error(cat(op, ": oneDNN's sgemm failed with status ", static_cast<int>(status), " for (m, n, k) = (", m, ", ",
                    n, ", ", k, ")"));
  }
}

dnnl::primitive_attr plan_attributes() {
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attributes;
}

DnnlPlan::DnnlPlan(const dnnl::primitive_desc& pd, std::vector<PlanOperand> operands)
    : primitive_(pd), scratchpad_(pd.scratchpad_desc()) {
  for (PlanOperand& plain : operands) {
    const dnnl::memory::desc inner = pd.query_md(dnnl::query::exec_arg_md, plain.arg);
    std::optional<dnnl::reorder> convert;
    if (inner != plain.user) {
      const dnnl::memory::desc &from = plain.output ? inner : plain.user, &to = plain.output ? plain.user : inner;
      convert = dnnl::reorder(dnnl::reorder::primitive_desc(dnnl_engine(), from, dnnl_engine(), to));
    }
    operands_.push_back({std::move(plain), inner, std::move(convert)});
  }
}

void DnnlPlan::execute(const std::vector<void*>& data) const {
  dnnl::stream& stream = thread_stream();
  std::vector<Buffer> buffers;  // reserved so that the memories handed to oneDNN stay put
  buffers.reserve(operands_.size() + 1);
  std::unordered_map<int, dnnl::memory> arguments;
  struct WriteBack {
    const dnnl::reorder* convert;
    dnnl::memory inner, plain;
  };
  std::vector<WriteBack> write_backs;
  for (size_t i = 0; i < operands_.size(); ++i) {
    const Operand& operand = operands_[i];
    dnnl::memory plain(operand.plain.user, dnnl_engine(), data[i]);
    if (!operand.convert) {
      arguments.emplace(operand.plain.arg, plain);
      continue;
    }
    dnnl::memory inner = buffers.emplace_back(operand.inner).memory;
    arguments.emplace(operand.plain.arg, inner);
    if (operand.plain.output) {
      write_backs.push_back({&*operand.convert, inner, plain});
    } else {
      operand.convert->execute(stream, plain, inner);
    }
  }
  if (scratchpad_.get_size() > 0) arguments.emplace(DNNL_ARG_SCRATCHPAD, buffers.emplace_back(scratchpad_).memory);
  primitive_.execute(stream, arguments);
  for (WriteBack& w : write_backs) w.convert->execute(stream, w.inner, w.plain);
  stream.wait();
}

}  // namespace kusari::kernels::cpu
