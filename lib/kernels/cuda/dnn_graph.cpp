// cuDNN's backend API as owned descriptors (detail/dnn_graph.h).

#include <kusari/kernels/cuda/detail/dnn_graph.h>

#include <algorithm>
#include <cstdint>

#include <kusari/kernels/cuda/detail/dnn.h>

namespace kusari::kernels::cuda {

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t made = nullptr;
  check_dnn(cudnnBackendCreateDescriptor(type, &made), "cudnnBackendCreateDescriptor");
  descriptor_ = std::shared_ptr<void>(made, [](void* d) { cudnnBackendDestroyDescriptor(d); });
}

void BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t kind, int64_t count,
                            const void* values, const char* what) {
  check_dnn(cudnnBackendSetAttribute(get(), name, kind, count, values), what);
}

void BackendDescriptor::set_int64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values,
                                   const char* what) {
  set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data(), what);
}

void BackendDescriptor::set_descriptor(cudnnBackendAttributeName_t name, const BackendDescriptor& value,
                                       const char* what) {
  cudnnBackendDescriptor_t d = value.get();
  set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d, what);
}

void BackendDescriptor::finalize(const char* what) { check_dnn(try_finalize(), what); }

cudnnStatus_t BackendDescriptor::try_finalize() { return cudnnBackendFinalize(get()); }

BackendDescriptor graph_tensor(int64_t uid, cudnnDataType_t type, const std::vector<int64_t>& extents,
                               const std::vector<int64_t>& strides, int64_t alignment) {
  constexpr const char* what = "a cuDNN graph tensor";
  BackendDescriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, what);
  t.set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, extents, what);
  t.set_int64s(CUDNN_ATTR_TENSOR_STRIDES, strides, what);
  t.set_int64s(CUDNN_ATTR_TENSOR_UNIQUE_ID, {uid}, what);
  t.set_int64s(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, {alignment}, what);
  t.finalize(what);
  return t;
}

BackendDescriptor operation_graph(const BackendDescriptor& op) {
  constexpr const char* what = "a cuDNN operation graph";
  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set_descriptor(CUDNN_ATTR_OPERATIONGRAPH_OPS, op, what);
  graph.finalize(what);
  return graph;
}

BackendDescriptor device_properties(cudnnHandle_t handle) {
  constexpr const char* what = "cuDNN's device properties";
  BackendDescriptor device(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
  device.set(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, what);
  device.finalize(what);
  return device;
}

BackendDescriptor device_properties(const std::string& json) {
  constexpr const char* what = "cuDNN's device properties from JSON";
  BackendDescriptor device(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
  device.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, static_cast<int64_t>(json.size()),
             json.data(), what);
  if (device.try_finalize() != CUDNN_STATUS_SUCCESS) {
    char reason[512] = "";
    cudnnGetLastErrorString(reason, sizeof reason);
    throw DeviceError(cat(what, ": ", reason));
  }
  return device;
}

std::vector<BackendDescriptor> ranked_configs(const BackendDescriptor& graph, cudnnBackendHeurMode_t mode,
                                              const BackendDescriptor& device) {
  constexpr const char* what = "cuDNN's engine heuristics";
  BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, what);
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, what);
  heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, device, what);
  heuristics.finalize(what);
  int64_t count = 0;
  check_dnn(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     0, &count, nullptr),
            what);
  std::vector<BackendDescriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  int64_t returned = 0;
  check_dnn(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     count, &returned, raw.data()),
            what);
  if (returned < count) configs.erase(configs.begin() + returned, configs.end());
  return configs;
}

std::vector<cudnnBackendNumericalNote_t> numerical_notes(const BackendDescriptor& config) {
  constexpr const char* what = "an engine's numerical notes";
  BackendDescriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  int64_t one = 0;
  check_dnn(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &one,
                                     &raw),
            what);
  std::vector<cudnnBackendNumericalNote_t> notes(CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
  int64_t count = 0;
  check_dnn(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                     static_cast<int64_t>(notes.size()), &count, notes.data()),
            what);
  notes.resize(static_cast<size_t>(std::min<int64_t>(count, CUDNN_NUMERICAL_NOTE_TYPE_COUNT)));
  return notes;
}

std::shared_ptr<BackendDescriptor> try_plan(const BackendDescriptor& config, const BackendDescriptor& device,
                                            cudnnStatus_t& why) {
  constexpr const char* what = "a cuDNN execution plan";
  auto plan = std::make_shared<BackendDescriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  plan->set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config, what);
  plan->set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, device, what);
  why = plan->try_finalize();
  return why == CUDNN_STATUS_SUCCESS ? plan : nullptr;
}

int64_t plan_workspace(const BackendDescriptor& plan) {
  int64_t bytes = 0, count = 0;
  check_dnn(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &count,
                                     &bytes),
            "an execution plan's workspace");
  return bytes;
}

std::string plan_json(const BackendDescriptor& plan) {
  int64_t length = 0;
  if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0, &length,
                               nullptr) != CUDNN_STATUS_SUCCESS) {
    return {};
  }
  std::string json(static_cast<size_t>(length), '\0');
  if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, length,
                               &length, json.data()) != CUDNN_STATUS_SUCCESS) {
    return {};
  }
  json.resize(std::min(json.size(), static_cast<size_t>(length)));
  while (!json.empty() && json.back() == '\0') json.pop_back();
  return json;
}

void execute_plan(cudnnHandle_t handle, const BackendDescriptor& plan, const std::vector<int64_t>& uids,
                  const std::vector<void*>& pointers, void* workspace) {
  constexpr const char* what = "a cuDNN variant pack";
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set_int64s(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids, what);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(pointers.size()),
           pointers.data(), what);
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, what);
  pack.finalize(what);
  check_dnn(cudnnBackendExecute(handle, plan.get(), pack.get()), "cudnnBackendExecute");
}

int64_t byte_alignment(const void* data) {
  const auto address = reinterpret_cast<uintptr_t>(data);
  int64_t alignment = 1;
  while (alignment < 16 && address % static_cast<uintptr_t>(alignment * 2) == 0) alignment *= 2;
  return alignment;
}

}  // namespace kusari::kernels::cuda
