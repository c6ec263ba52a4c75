// The CUDA backend's shared cuDNN pieces: per-device handles, statuses, data types and descriptors.

#include <kusari/kernels/cuda/detail/dnn.h>

#include <array>
#include <limits>

#include <kusari/kernels/cuda/detail/check.h>
#include <kusari/kernels/cuda/detail/streams.h>

namespace kusari::kernels::cuda {
namespace {

// A device's cuDNN handle, made on first use, and the mutex its users take.
struct DeviceDnn {
  std::once_flag once;
  cudnnHandle_t handle = nullptr;
  std::mutex mutex;
};

DeviceDnn& dnn_of(int index) {
  static std::array<DeviceDnn, kMaxDevices> all;
  DeviceDnn& d = all[static_cast<size_t>(index)];
  std::call_once(d.once, [&] {
    DeviceGuard guard(index);
    check_dnn(cudnnCreate(&d.handle), "cudnnCreate");
  });
  return d;
}

}  // namespace

void check_dnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) throw DeviceError(cat(what, ": ", cudnnGetErrorString(status)));
}

DnnLock::DnnLock(int index) {
  DeviceDnn& dnn = dnn_of(index);
  lock_ = std::unique_lock(dnn.mutex);
  handle_ = dnn.handle;
  check_dnn(cudnnSetStream(handle_, current_stream(index)), "cudnnSetStream");
}

cudnnDataType_t dnn_type(Dtype dtype, const char* op) {
  switch (dtype) {
    case Dtype::float32:
      return CUDNN_DATA_FLOAT;
    case Dtype::float64:
      return CUDNN_DATA_DOUBLE;
    case Dtype::float16:
      return CUDNN_DATA_HALF;
    case Dtype::bfloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      throw DtypeError(cat(op, ": expected a floating dtype, got ", dtype));
  }
}

int dnn_int(int64_t value, const Shape& shape, const char* op) {
  if (value > std::numeric_limits<int>::max()) {
    throw ShapeError(cat(op, ": cuDNN takes extents and strides below 2^31, got an array of shape ", shape));
  }
  return static_cast<int>(value);
}

TensorDescriptor::TensorDescriptor(const Array& a, cudnnDataType_t type, const char* op) {
  const Shape& s = a.shape();
  const auto& st = a.strides();
  std::array<int, 8> v{};
  for (size_t i = 0; i < 4; ++i) {
    v[i] = dnn_int(s[static_cast<int64_t>(i)], s, op);
    v[4 + i] = dnn_int(st[i], s, op);
  }
  check_dnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
  const cudnnStatus_t status = cudnnSetTensor4dDescriptorEx(d, type, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  if (status != CUDNN_STATUS_SUCCESS) {
    cudnnDestroyTensorDescriptor(d);
    check_dnn(status, "cudnnSetTensor4dDescriptorEx");
  }
}

}  // namespace kusari::kernels::cuda
