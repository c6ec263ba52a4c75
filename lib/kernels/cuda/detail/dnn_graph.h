#pragma once
// Internal to the CUDA backend: cuDNN's backend API (its graph of operations, the engines its
// heuristics rank for a graph on a device, the execution plans built from them), as owned objects
// with checked attributes. Only running a plan needs the device: ranking and building take a
// description of it (cuDNN's device properties), read from the device's handle or, in the host
// suite, from a device's description in cuDNN's JSON.

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kusari::kernels::cuda {

// One backend descriptor, destroyed with the last copy of this object.
class BackendDescriptor {
 public:
  // A new descriptor of `type`, to be set and finalized.
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  // The descriptor, for cuDNN's calls.
  cudnnBackendDescriptor_t get() const { return descriptor_.get(); }
  // Sets attribute `name` to `count` values of `kind`; DeviceError naming `what` where cuDNN refuses.
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t kind, int64_t count, const void* values,
           const char* what);
  // Sets attribute `name` to these integers.
  void set_int64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values, const char* what);
  // Sets attribute `name` to another (finalized) descriptor.
  void set_descriptor(cudnnBackendAttributeName_t name, const BackendDescriptor& value, const char* what);
  // Finalizes it; DeviceError naming `what` where cuDNN refuses.
  void finalize(const char* what);
  // Finalizes it and returns cuDNN's status (for refusals the caller expects, such as an engine this
  // graph does not support).
  cudnnStatus_t try_finalize();

 private:
  std::shared_ptr<void> descriptor_;
};

// A graph tensor of `type` with these extents and strides (in elements), named `uid` when its data is
// given to an execution, whose data starts at a multiple of `alignment` bytes.
BackendDescriptor graph_tensor(int64_t uid, cudnnDataType_t type, const std::vector<int64_t>& extents,
                               const std::vector<int64_t>& strides, int64_t alignment);

// The graph of the one operation `op`.
BackendDescriptor operation_graph(const BackendDescriptor& op);

// The properties of the device `handle` is for, as cuDNN's heuristics and plans take them.
BackendDescriptor device_properties(cudnnHandle_t handle);

// The properties of a device described in cuDNN's JSON (what a device's properties serialize to);
// DeviceError with cuDNN's reason where the text does not describe one.
BackendDescriptor device_properties(const std::string& json);

// The engine configurations cuDNN's heuristics in `mode` rank for `graph` on `device`, best first.
std::vector<BackendDescriptor> ranked_configs(const BackendDescriptor& graph, cudnnBackendHeurMode_t mode,
                                              const BackendDescriptor& device);

// The numerical notes of the engine a configuration runs (tensor cores, inputs converted down, FFT...).
std::vector<cudnnBackendNumericalNote_t> numerical_notes(const BackendDescriptor& config);

// The execution plan of `config` for `device`, or nothing where cuDNN cannot build it (an engine that
// does not run this graph there); `why` then says what cuDNN answered.
std::shared_ptr<BackendDescriptor> try_plan(const BackendDescriptor& config, const BackendDescriptor& device,
                                            cudnnStatus_t& why);

// The bytes of workspace a plan takes.
int64_t plan_workspace(const BackendDescriptor& plan);

// A plan as cuDNN serializes it (its engine and knob choices): equal for two plans of one configuration;
// empty where cuDNN does not serialize it.
std::string plan_json(const BackendDescriptor& plan);

// Runs `plan` on `handle`'s stream with the data of the tensors `uids` at `pointers` and `workspace`.
void execute_plan(cudnnHandle_t handle, const BackendDescriptor& plan, const std::vector<int64_t>& uids,
                  const std::vector<void*>& pointers, void* workspace);

// The largest alignment, up to 16 bytes, of the address `data` (what a graph tensor says of its data).
int64_t byte_alignment(const void* data);

}  // namespace kusari::kernels::cuda
