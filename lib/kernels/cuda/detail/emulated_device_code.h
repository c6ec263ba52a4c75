#pragma once
// The CUDA backend's host emulation (meson option cuda-emulation): what nvcc gives device code, for the
// host compiler, which includes this before each kernel source compiled as C++ (without contraction into
// fused multiply-adds). Block-shared arrays (KUSARI_SHARED_ARRAY) are per OS thread (blocks run one after
// another on it) and filled with 0xff bytes at each block's start; the intrinsics compute what the
// device's do, the math functions are the host's (glibc's exp and log may differ from CUDA's by an ulp or
// two).

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <source_location>
#include <type_traits>

#include <kusari/kernels/cuda/detail/emulated_threads.h>

// Block-shared arrays are declared with KUSARI_SHARED_ARRAY (detail/shared_memory.cuh), which fills them
// with garbage at each block's start; a __shared__ declaration does not compile here.
#undef __shared__
#define __shared__ declare_block_shared_arrays_with_KUSARI_SHARED_ARRAY

// Device code's unqualified math takes each type's own overload, as CUDA's global ones do.
using std::ceil;
using std::exp;
using std::floor;
using std::log;

// CUDA's min and max of two integers or floats of any two types, in their common type (floats as fmin
// and fmax: a NaN operand gives the other).
template <class A, class B>
constexpr std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return std::fmin(C(a), C(b));
  return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B>
constexpr std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return std::fmax(C(a), C(b));
  return C(a) < C(b) ? C(b) : C(a);
}

// __syncthreads, knowing its call by its place in the source (which optimization does not duplicate, as it
// may duplicate a call instruction).
#define __syncthreads() kusari::kernels::cuda::emulation::block_barrier(std::source_location::current())

// __threadfence_system: the host's full fence.
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// __shfl_xor_sync of any value of up to 8 bytes.
template <class T>
T __shfl_xor_sync(unsigned member_mask, T value, int lane_mask, int width = 32,
                  std::source_location site = std::source_location::current()) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "a shuffle moves at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  bits = kusari::kernels::cuda::emulation::warp_exchange_xor(member_mask, bits, lane_mask, width, site);
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

// The upper 32 bits of a 64-bit product.
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((uint64_t{a} * b) >> 32); }

// A float with these bits.
inline float __uint_as_float(unsigned bits) { return std::bit_cast<float>(bits); }

// Sums, differences and products rounded to nearest, never fused into a multiply-add (the kernels are
// compiled with -ffp-contract=off).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }

// atomicCAS of a 32-bit word (also one the host maps).
inline unsigned atomicCAS(unsigned* address, unsigned compare, unsigned value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
