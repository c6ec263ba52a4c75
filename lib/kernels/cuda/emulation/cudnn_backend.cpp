// cuDNN's backend API on the host, for the host emulation (meson option cuda-emulation): descriptors as
// attribute stores (a descriptor given as an attribute's value is copied, as cuDNN keeps what it was
// given), graphs of one convolution pass, device properties from a handle or JSON, the heuristics' ranking
// of the emulation's four engines, execution plans and their execution on the handle's stream. The engines
// are there to be chosen between as cuDNN's are, each computing as its numerical notes say:
//   0  tensor cores (note TENSOR_CORE): float32 inputs read as TF32; sums into a workspace
//   1  reduced-precision sums (TENSOR_CORE, REDUCED_PRECISION_REDUCTION), float16 and bfloat16 only:
//      each partial sum rounded to the element type
//   2  a kernel for 16-byte aligned operands: no plan for a tensor declared less aligned; sums into a
//      workspace
//   3  the general kernel, any operands, no workspace
// Modes A and B rank 1, 0, 2, 3 for the half types, 0, 2, 3 for float32 and 2, 3 for float64; the
// fallback mode ranks 3. An execution checks every tensor's data against its declared alignment and the
// emulated device's allocations, and the workspace against the plan's size.

#include <cudnn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <kusari/core/error.h>
#include <kusari/kernels/cuda/detail/emulated_cudnn.h>
#include <kusari/kernels/cuda/detail/emulated_memory.h>
#include <kusari/kernels/cuda/detail/emulated_streams.h>

namespace emulation = kusari::kernels::cuda::emulation;
using emulation::DnnNumerics;
using emulation::DnnPass;
using emulation::DnnTensor;

namespace {

// A graph tensor: its layout, the uid a variant pack names its data by, the alignment it promises.
struct GraphTensor {
  DnnTensor tensor;
  int64_t uid = 0, alignment = 1;
};

// One convolution pass as an operation of a graph: result = alpha · pass + beta · result.
struct Operation {
  DnnPass pass = DnnPass::forward;
  GraphTensor x, w, y;
  emulation::DnnGeometry geometry;
  double alpha = 1, beta = 0;
};

// One of the emulation's engines for an operation.
struct Engine {
  Operation operation;
  int64_t number = 0;
};

// A backend descriptor: its attributes as set, and what finalizing made of them.
struct Backend;

// One attribute's values as set: their type and bytes, and copies of the descriptors among them.
struct Attribute {
  cudnnBackendAttributeType_t type;
  int64_t count = 0;
  std::vector<char> bytes;
  std::vector<std::shared_ptr<Backend>> descriptors;
};

struct Backend {
  cudnnBackendDescriptorType_t type;
  bool finalized = false;
  std::map<cudnnBackendAttributeName_t, Attribute> attributes;
  GraphTensor tensor;                  // a tensor
  emulation::DnnGeometry geometry;     // a convolution
  Operation operation;                 // an operation or a graph
  std::vector<Engine> ranked;          // the heuristics' results
  Engine engine;                       // an engine, an engine configuration or an execution plan
  size_t workspace = 0;                // an execution plan's
  std::vector<int64_t> uids;           // a variant pack's
  std::vector<void*> pointers;         // a variant pack's
  void* workspace_data = nullptr;      // a variant pack's
};

Backend* backend(cudnnBackendDescriptor_t d) { return static_cast<Backend*>(d); }

// The bytes of one value of an attribute type (0 for a type the emulation does not take).
size_t value_bytes(cudnnBackendAttributeType_t type) {
  switch (type) {
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR: return 8;
    case CUDNN_TYPE_FLOAT:
    case CUDNN_TYPE_DATA_TYPE:
    case CUDNN_TYPE_CONVOLUTION_MODE:
    case CUDNN_TYPE_HEUR_MODE:
    case CUDNN_TYPE_NUMERICAL_NOTE: return 4;
    case CUDNN_TYPE_CHAR: return 1;
    default: return 0;
  }
}

// The values of attribute `name` of type `type` (at least one), or nothing where it was not set so.
template <class T>
std::vector<T> values(const Backend& b, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type) {
  const auto found = b.attributes.find(name);
  if (found == b.attributes.end() || found->second.type != type || found->second.count < 1) return {};
  std::vector<T> out(static_cast<size_t>(found->second.count));
  std::memcpy(out.data(), found->second.bytes.data(), found->second.bytes.size());
  return out;
}

// The descriptor of `type` attribute `name` holds (its copy), or null (also for one of another type).
std::shared_ptr<Backend> descriptor(const Backend& b, cudnnBackendAttributeName_t name,
                                    cudnnBackendDescriptorType_t type) {
  const auto found = b.attributes.find(name);
  if (found == b.attributes.end() || found->second.descriptors.size() != 1) return nullptr;
  return found->second.descriptors.front()->type == type ? found->second.descriptors.front() : nullptr;
}

// The attribute names of a pass's operation: its descriptor type, x, w, y, geometry, alpha, beta.
struct PassNames {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, geometry, alpha, beta;
};

const PassNames kPasses[] = {
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
    {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA}};

// The pass of an operation descriptor type, or null for another type.
const PassNames* pass_names(cudnnBackendDescriptorType_t type, DnnPass& pass) {
  for (size_t i = 0; i < 3; ++i) {
    if (kPasses[i].type == type) {
      pass = static_cast<DnnPass>(i);
      return &kPasses[i];
    }
  }
  return nullptr;
}

cudnnStatus_t bad(const std::string& why) { return emulation::refuse(CUDNN_STATUS_BAD_PARAM, why); }

cudnnStatus_t finalize_tensor(Backend& b) {
  const auto type = values<cudnnDataType_t>(b, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE);
  const auto extents = values<int64_t>(b, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64);
  const auto strides = values<int64_t>(b, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64);
  const auto uid = values<int64_t>(b, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64);
  const auto alignment = values<int64_t>(b, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64);
  if (type.empty() || extents.empty() || uid.empty() || alignment.empty() || strides.size() != extents.size()) {
    return bad("a tensor without its type, extents, strides of as many axes, uid or alignment");
  }
  const int64_t a = alignment.front();
  if (a < 1 || (a & (a - 1)) != 0) return bad(kusari::cat("a byte alignment of ", a));
  b.tensor = {{type.front(), extents, strides}, uid.front(), a};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize_convolution(Backend& b) {
  const auto compute = values<cudnnDataType_t>(b, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE);
  const auto mode = values<cudnnConvolutionMode_t>(b, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE);
  const auto dims = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64);
  const auto dilations = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64);
  const auto strides = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64);
  const auto pre = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64);
  const auto post = values<int64_t>(b, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64);
  if (compute.empty() || mode.empty() || dims.empty()) return bad("a convolution without its type, mode or axes");
  if (mode.front() != CUDNN_CROSS_CORRELATION || dims.front() != 2) {
    return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "the emulation takes 2-D cross-correlations only");
  }
  for (const auto* v : {&dilations, &strides, &pre, &post}) {
    if (v->size() != 2) return bad("a convolution's dilations, strides or paddings not given for 2 axes");
  }
  b.geometry = {{pre[0], pre[1]}, {post[0], post[1]}, {strides[0], strides[1]}, {dilations[0], dilations[1]},
                compute.front()};
  return CUDNN_STATUS_SUCCESS;
}

// A scale attribute in the compute type's precision (float or double).
bool scale(const Backend& b, cudnnBackendAttributeName_t name, double& out) {
  if (const auto d = values<double>(b, name, CUDNN_TYPE_DOUBLE); !d.empty()) {
    out = d.front();
    return true;
  }
  if (const auto f = values<float>(b, name, CUDNN_TYPE_FLOAT); !f.empty()) {
    out = f.front();
    return true;
  }
  return false;
}

cudnnStatus_t finalize_operation(Backend& b, const PassNames& names, DnnPass pass) {
  const auto x = descriptor(b, names.x, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const auto w = descriptor(b, names.w, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const auto y = descriptor(b, names.y, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const auto geometry = descriptor(b, names.geometry, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  Operation& op = b.operation;
  op.pass = pass;
  if (!x || !w || !y || !geometry || !scale(b, names.alpha, op.alpha) || !scale(b, names.beta, op.beta)) {
    return bad("a convolution operation without its three tensors, geometry, alpha or beta");
  }
  op.x = x->tensor;
  op.w = w->tensor;
  op.y = y->tensor;
  op.geometry = geometry->geometry;
  if (op.x.uid == op.w.uid || op.x.uid == op.y.uid || op.w.uid == op.y.uid) return bad("two tensors of one uid");
  const std::string mismatch = emulation::convolution_mismatch(op.x.tensor, op.w.tensor, op.y.tensor, op.geometry);
  return mismatch.empty() ? CUDNN_STATUS_SUCCESS : bad(mismatch);
}

// The emulation's engines an operation's graph has, in the heuristics' order for `mode`.
std::vector<int64_t> ranking(const Operation& op, cudnnBackendHeurMode_t mode) {
  if (mode == CUDNN_HEUR_MODE_FALLBACK) return {3};
  switch (op.x.tensor.type) {
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16: return {1, 0, 2, 3};
    case CUDNN_DATA_FLOAT: return {0, 2, 3};
    default: return {2, 3};
  }
}

// An engine's numerical notes.
std::vector<cudnnBackendNumericalNote_t> notes_of(int64_t engine) {
  switch (engine) {
    case 0: return {CUDNN_NUMERICAL_NOTE_TENSOR_CORE};
    case 1: return {CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION};
    default: return {};
  }
}

// How an engine computes an operation's sums.
DnnNumerics numerics_of(const Engine& e) {
  if (e.number == 0) return DnnNumerics::tf32_inputs;  // only float32 inputs are rounded
  return e.number == 1 ? DnnNumerics::sums_in_element_type : DnnNumerics::exact;
}

// The workspace an engine takes for its operation: one compute-type value per result element (engines 0
// and 2), else none.
size_t workspace_of(const Engine& e) {
  if (e.number != 0 && e.number != 2) return 0;
  const Operation& op = e.operation;
  return emulation::partials_bytes(op.pass, op.x.tensor, op.w.tensor, op.y.tensor, op.geometry);
}

// Whether an engine builds a plan for its operation (engine 2: every tensor declared 16-byte aligned).
bool plans(const Engine& e) {
  const Operation& op = e.operation;
  if (e.number != 2) return true;
  return op.x.alignment >= 16 && op.w.alignment >= 16 && op.y.alignment >= 16;
}

cudnnStatus_t finalize(Backend& b) {
  DnnPass pass{};
  if (const PassNames* names = pass_names(b.type, pass)) return finalize_operation(b, *names, pass);
  switch (b.type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR: return finalize_tensor(b);
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR: return finalize_convolution(b);
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: {
      const auto found = b.attributes.find(CUDNN_ATTR_OPERATIONGRAPH_OPS);
      if (found == b.attributes.end() || found->second.descriptors.size() != 1) {
        return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "the emulation's graphs hold one operation");
      }
      const Backend& op = *found->second.descriptors.front();
      if (!pass_names(op.type, pass)) return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "not a convolution pass");
      b.operation = op.operation;
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR: {
      const auto json = values<char>(b, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR);
      const bool handle = !values<cudnnHandle_t>(b, CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE).empty();
      const auto first = std::find_if(json.begin(), json.end(),
                                      [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
      if (!handle && (first == json.end() || *first != '{')) return bad("device properties without a handle or JSON");
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: {
      const auto graph = descriptor(b, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
      const auto mode = values<cudnnBackendHeurMode_t>(b, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE);
      const auto device = descriptor(b, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
      if (!graph || mode.empty() || !device) return bad("heuristics without a graph, mode or device properties");
      for (const int64_t number : ranking(graph->operation, mode.front())) {
        b.ranked.push_back({graph->operation, number});
      }
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: {
      const auto graph = descriptor(b, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
      const auto index = values<int64_t>(b, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64);
      if (!graph || index.empty()) return bad("an engine without its graph or index");
      const std::vector<int64_t> all = ranking(graph->operation, CUDNN_HEUR_MODE_A);
      if (std::find(all.begin(), all.end(), index.front()) == all.end()) {
        return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "an engine this graph does not have");
      }
      b.engine = {graph->operation, index.front()};
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: {
      const auto engine = descriptor(b, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      if (!engine) return bad("an engine configuration without its engine");
      b.engine = engine->engine;
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
      const auto config = descriptor(b, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      const auto device = descriptor(b, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
      if (!config || !device) return bad("an execution plan without its engine configuration or device properties");
      if (!plans(config->engine)) {
        return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "engine 2 takes tensors declared 16-byte aligned only");
      }
      b.engine = config->engine;
      b.workspace = workspace_of(b.engine);
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: {
      b.uids = values<int64_t>(b, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64);
      b.pointers = values<void*>(b, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR);
      const auto workspace = values<void*>(b, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR);
      b.workspace_data = workspace.empty() ? nullptr : workspace.front();
      if (b.uids.size() != b.pointers.size()) return bad("a variant pack of more uids than pointers or fewer");
      return CUDNN_STATUS_SUCCESS;
    }
    default: return emulation::refuse(CUDNN_STATUS_NOT_SUPPORTED, "a descriptor type the emulation does not take");
  }
}

// Copies `from`'s engine into the (unfinalized) descriptor `into` of `type`, finalized.
cudnnStatus_t fill(void* into, cudnnBackendDescriptorType_t type, const Engine& from) {
  Backend* b = backend(into);
  if (b == nullptr || b->type != type) return bad("a result descriptor of another type");
  b->engine = from;
  b->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

// The data pointer a variant pack gives uid `uid`, or null.
void* data_of(const Backend& pack, int64_t uid) {
  for (size_t i = 0; i < pack.uids.size(); ++i) {
    if (pack.uids[i] == uid) return pack.pointers[i];
  }
  return nullptr;
}

// An execution plan's serialization: its engine.
std::string json_of(const Backend& plan) { return kusari::cat("{\"engine\":", plan.engine.number, "}"); }

}  // namespace

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* d) {
  auto* made = new Backend;
  made->type = type;
  *d = made;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
  delete backend(d);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count, const void* given) {
  Backend* b = backend(d);
  if (b->finalized) return bad("an attribute set after finalizing");
  const size_t each = value_bytes(type);
  if (each == 0 || count < 1 || given == nullptr) return bad("an attribute of no values or of an unknown type");
  Attribute a{type, count, std::vector<char>(each * static_cast<size_t>(count)), {}};
  std::memcpy(a.bytes.data(), given, a.bytes.size());
  if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
    for (int64_t i = 0; i < count; ++i) {
      const Backend* value = backend(static_cast<const cudnnBackendDescriptor_t*>(given)[i]);
      if (value == nullptr || !value->finalized) return bad("a descriptor attribute set to one not finalized");
      a.descriptors.push_back(std::make_shared<Backend>(*value));
    }
  }
  b->attributes[name] = std::move(a);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d) {
  Backend* b = backend(d);
  if (b->finalized) return bad("a descriptor finalized twice");
  const cudnnStatus_t status = finalize(*b);
  b->finalized = status == CUDNN_STATUS_SUCCESS;
  return status;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t* count,
                                       void* out) {
  const Backend* b = backend(d);
  if (!b->finalized) return bad("an attribute read before finalizing");
  // Where the attribute is one of the emulation's answers: the descriptor and value types it belongs to.
  const auto answers = [&](cudnnBackendDescriptorType_t of, cudnnBackendAttributeType_t as) {
    return b->type == of && type == as;
  };
  switch (name) {
    case CUDNN_ATTR_ENGINEHEUR_RESULTS: {
      if (!answers(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR)) break;
      const auto n = static_cast<int64_t>(b->ranked.size());
      *count = requested == 0 ? n : std::min(requested, n);
      for (int64_t i = 0; i < std::min(requested, n); ++i) {
        const cudnnStatus_t s = fill(static_cast<cudnnBackendDescriptor_t*>(out)[i], CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                                     b->ranked[static_cast<size_t>(i)]);
        if (s != CUDNN_STATUS_SUCCESS) return s;
      }
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINECFG_ENGINE:
      if (!answers(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR)) break;
      *count = 1;
      return requested < 1 ? CUDNN_STATUS_SUCCESS
                           : fill(static_cast<cudnnBackendDescriptor_t*>(out)[0], CUDNN_BACKEND_ENGINE_DESCRIPTOR,
                                  b->engine);
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE: {
      if (!answers(CUDNN_BACKEND_ENGINE_DESCRIPTOR, CUDNN_TYPE_NUMERICAL_NOTE)) break;
      const std::vector<cudnnBackendNumericalNote_t> notes = notes_of(b->engine.number);
      *count = static_cast<int64_t>(notes.size());
      std::copy_n(notes.begin(), std::min<size_t>(notes.size(), static_cast<size_t>(std::max<int64_t>(requested, 0))),
                  static_cast<cudnnBackendNumericalNote_t*>(out));
      return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
      if (!answers(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, CUDNN_TYPE_INT64)) break;
      *count = 1;
      if (requested >= 1) *static_cast<int64_t*>(out) = static_cast<int64_t>(b->workspace);
      return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION: {
      if (!answers(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, CUDNN_TYPE_CHAR)) break;
      const std::string json = json_of(*b);
      *count = static_cast<int64_t>(json.size() + 1);
      if (requested > 0) {
        const size_t n = std::min(json.size() + 1, static_cast<size_t>(requested));
        std::memcpy(out, json.c_str(), n);
      }
      return CUDNN_STATUS_SUCCESS;
    }
    default: {
      const auto found = b->attributes.find(name);
      if (found == b->attributes.end() || found->second.type != type) return bad("an attribute not set so");
      *count = found->second.count;
      const size_t n = std::min(found->second.count, std::max<int64_t>(requested, 0));
      std::memcpy(out, found->second.bytes.data(), n * value_bytes(type));
      return CUDNN_STATUS_SUCCESS;
    }
  }
  return bad("an attribute of another descriptor, or read as another type");
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan_descriptor,
                                  cudnnBackendDescriptor_t pack_descriptor) {
  const Backend& plan = *backend(plan_descriptor);
  const Backend& pack = *backend(pack_descriptor);
  if (plan.type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !plan.finalized || !pack.finalized) {
    return bad("an execution without a finalized plan and variant pack");
  }
  const Operation op = plan.engine.operation;
  std::vector<const void*> data;
  for (const GraphTensor* t : {&op.x, &op.w, &op.y}) {
    const void* p = data_of(pack, t->uid);
    if (p == nullptr) return bad(kusari::cat("no data for tensor ", t->uid, " in the variant pack"));
    if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(t->alignment) != 0) {
      return emulation::refuse(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER,
                               kusari::cat("tensor ", t->uid, "'s data is not aligned to the ", t->alignment,
                                           " bytes it declares"));
    }
    if (!emulation::device_span(p, t->tensor.span_bytes())) {
      return bad(kusari::cat("tensor ", t->uid, "'s data beyond its allocation on the emulated device"));
    }
    data.push_back(p);
  }
  void* workspace = pack.workspace_data;
  if (plan.workspace > 0 && (workspace == nullptr || !emulation::device_span(workspace, plan.workspace))) {
    return bad(kusari::cat("a workspace of fewer than the plan's ", plan.workspace, " bytes"));
  }
  const std::string aliased = emulation::aliasing(op.pass, op.x.tensor, data[0], op.w.tensor, data[1], op.y.tensor,
                                                  data[2], workspace, plan.workspace);
  if (!aliased.empty()) return bad(aliased);
  const DnnNumerics numerics = numerics_of(plan.engine);
  void* partials = plan.workspace > 0 ? workspace : nullptr;
  emulation::enqueue(handle->stream, [=] {
    emulation::convolve(op.pass, op.x.tensor, data[0], op.w.tensor, data[1], op.y.tensor, data[2], op.geometry,
                        op.alpha, op.beta, numerics, partials);
  });
  return CUDNN_STATUS_SUCCESS;
}
