#pragma once
// Internal to the CUDA backend: what its cuDNN callers share. One handle per device, used by one caller
// at a time (DnnLock, which also points it at the calling thread's current stream), cuDNN's statuses as
// kusari errors, its data types, and the descriptor of a 4-D array with its extents and strides.

#include <cudnn.h>

#include <mutex>

#include <kusari/core/array.h>

namespace kusari::kernels::cuda {

// Throws DeviceError "<what>: <cuDNN's message>" unless status is CUDNN_STATUS_SUCCESS.
void check_dnn(cudnnStatus_t status, const char* what);

// Device `index`'s cuDNN handle (made on first use), held for one scope: the lock is taken and the
// handle set to current_stream(index), so the calls made through it queue where the caller's kernels do.
class DnnLock {
 public:
  explicit DnnLock(int index);
  cudnnHandle_t handle() const { return handle_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cudnnHandle_t handle_ = nullptr;
};

// cuDNN's data type of a floating dtype; DtypeError naming `op` for any other.
cudnnDataType_t dnn_type(Dtype dtype, const char* op);

// The descriptor of a 4-D array (its extents and strides), destroyed with it; ShapeError naming `op`
// for an extent or stride of 2^31 or more.
struct TensorDescriptor {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDescriptor(const Array& a, cudnnDataType_t type, const char* op);
  ~TensorDescriptor() { cudnnDestroyTensorDescriptor(d); }
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
};

// value as cuDNN's int; ShapeError naming `op` and the array's shape for one of 2^31 or more.
int dnn_int(int64_t value, const Shape& shape, const char* op);

}  // namespace kusari::kernels::cuda
