#pragma once
// The CPU backend's registration, area by area: each function installs the kernels of its file (which
// implements kusari/kernels/ops/<area>.h) into the dispatch tables; register_builtin_backends
// (kernels/builtin_backends.cpp) calls every one, once.

namespace kusari::kernels::cpu {

// Convolution forward and both gradients (convolution.cpp).
void register_convolution_kernels();
// Copy and fill (copy.cpp).
void register_copy_kernels();
// Unary, binary, where, axpby and the momentum step (elementwise.cpp).
void register_elementwise_kernels();
// Matrix products (linalg.cpp).
void register_linalg_kernels();
// Softmax cross-entropy and its gradient (loss.cpp).
void register_loss_kernels();
// Batch normalization: channel sums, the per-channel affine map, the passes of a whole batch, the
// per-channel arithmetic between them and the running averages (normalization.cpp).
void register_normalization_kernels();
// The momentum step and squared norms of many parameters at once, tensor by tensor (optimizer.cpp).
void register_optimizer_kernels();
// Max and average pooling with their gradients (pooling.cpp).
void register_pooling_kernels();
// The counter-based random generator (random.cpp).
void register_random_kernels();
// Reductions over axes and top-k hits (reduction.cpp).
void register_reduction_kernels();

}  // namespace kusari::kernels::cpu
