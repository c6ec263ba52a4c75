#pragma once
// The CUDA backend's registration, area by area, as the CPU's: register_builtin_backends
// (kernels/builtin_backends.cpp) calls register_cuda_backend once in a build with CUDA. Registration
// only installs pointers: no CUDA call runs until an array is put on a CUDA device.

namespace kusari::kernels::cuda {

// Copy, fill and transfers (copy.cu).
void register_copy_kernels();
// Unary, binary, where, axpby and the momentum step (elementwise.cu).
void register_elementwise_kernels();
// Reductions over axes and the top-k test (reduction.cu).
void register_reduction_kernels();
// The matrix product through cuBLASLt (linalg.cpp).
void register_linalg_kernels();
// The counter-based random fills (random.cu).
void register_random_kernels();
// Softmax cross-entropy and its gradient (loss.cu).
void register_loss_kernels();
// The momentum step and squared norms of many parameters in one launch each (multi_tensor.cu).
void register_multi_tensor_kernels();
// Batch normalization's channel sums and affine map (normalization.cu).
void register_normalization_kernels();
// Batch normalization of a whole batch, forward and backward: cuDNN's fused kernels or the channel
// passes (batch_norm.cpp).
void register_batch_norm_kernels();
// Batch normalization's statistics from channel sums, its backward's coefficients and its running
// averages, one launch each (batch_norm_statistics.cu).
void register_batch_norm_statistics_kernels();
// Max and average pooling with their gradients (pooling.cu).
void register_pooling_kernels();
// Convolution forward, data and filter gradients through cuDNN (convolution.cpp).
void register_convolution_kernels();
// The profiler's device tracer, through CUPTI (profiler_cupti.cpp).
void register_profiler_tracer();
// The allocator, every area's kernels and the profiler's device tracer.
void register_cuda_backend();

}  // namespace kusari::kernels::cuda
