#pragma once
// The CPU backend's registration, area by area: each function installs its file's kernels into the
// dispatch tables; register_builtin_backends (backend.cpp) calls every one, once.

namespace kusari::kernels::cpu {

// Channel sums and the per-channel affine map (channel_kernels.cpp).
void register_channel_kernels();
// Convolution forward and both gradients (conv_kernels.cpp).
void register_conv_kernels();
// Copy and fill (copy_kernels.cpp).
void register_copy_kernels();
// Unary, binary, where, axpby and the momentum step (elementwise_kernels.cpp).
void register_elementwise_kernels();
// Matrix products (gemm_kernel.cpp).
void register_gemm_kernels();
// Max and average pooling with their gradients (pool_kernels.cpp).
void register_pool_kernels();
// The counter-based random generator (random_kernel.cpp).
void register_random_kernels();
// Reductions (reduce_kernel.cpp).
void register_reduce_kernels();
// Softmax cross-entropy and its gradient (softmax_cross_entropy_kernel.cpp).
void register_softmax_cross_entropy_kernels();
// Top-k hit counts (top_k_kernel.cpp).
void register_top_k_kernels();

}  // namespace kusari::kernels::cpu
