#pragma once
// Internal to the CUDA backend: elements moved V at a time in one 16-byte (or narrower) access, for the
// kernels over contiguous or channel-dense operands, and the test of whether a layout's operands allow it.

#include <cstdint>
#include <cstring>

#include <kusari/kernels/cuda/detail/device_elements.cuh>
#if defined(KUSARI_CUDA_EMULATION)
#include <kusari/kernels/cuda/detail/emulated_traffic.h>
#endif

namespace kusari::kernels::cuda {

// V elements of T, loaded or stored in one access.
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// The elements of T in one 16-byte access.
template <class T>
inline constexpr int kPackElements = static_cast<int>(16 / sizeof(T));

#if defined(KUSARI_CUDA_EMULATION)
// The host emulation moves a pack as one access of a scalar or vector type of its size, as nvcc's one
// load or store instruction does (a host compiler may move a struct's elements one by one), so that the
// emulation's traffic record (detail/emulated_traffic.h) sees what a GPU's memory would, and fails the
// launch where the pack's address is not a multiple of its size, as a GPU does.
// PackBits<B>::type: B bytes in one access, allowed to alias the elements it moves (B is 1, 2, 4, 8 or 16).
template <size_t Bytes>
struct PackBits;
template <>
struct PackBits<16> {
  typedef unsigned char type __attribute__((vector_size(16), may_alias));
};
template <>
struct PackBits<8> {
  typedef uint64_t type __attribute__((may_alias));
};
template <>
struct PackBits<4> {
  typedef uint32_t type __attribute__((may_alias));
};
template <>
struct PackBits<2> {
  typedef uint16_t type __attribute__((may_alias));
};
template <>
struct PackBits<1> {
  typedef uint8_t type __attribute__((may_alias));
};

// The address of a pack of Bytes at p, after failing the launch where it is not a multiple of Bytes.
template <size_t Bytes>
inline uintptr_t pack_address(const void* p, bool store) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  if (address % Bytes != 0) emulation::fail_misaligned(address, Bytes, Bytes, store, nullptr);
  return address;
}
#endif

// The pack of V elements at element `offset` of p (p + offset aligned to the pack).
template <class T, int V>
__device__ inline Pack<T, V> load_pack(const T* p, int64_t offset) {
#if defined(KUSARI_CUDA_EMULATION)
  using Bits = typename PackBits<sizeof(Pack<T, V>)>::type;
  const Bits bits = *reinterpret_cast<const Bits*>(pack_address<sizeof(Bits)>(p + offset, false));
  Pack<T, V> pack;
  std::memcpy(&pack, &bits, sizeof pack);
  return pack;
#else
  return *reinterpret_cast<const Pack<T, V>*>(p + offset);
#endif
}

// Stores a pack at element `offset` of p (p + offset aligned to the pack).
template <class T, int V>
__device__ inline void store_pack(T* p, int64_t offset, const Pack<T, V>& pack) {
#if defined(KUSARI_CUDA_EMULATION)
  using Bits = typename PackBits<sizeof(Pack<T, V>)>::type;
  Bits bits;
  std::memcpy(&bits, &pack, sizeof bits);
  *reinterpret_cast<Bits*>(pack_address<sizeof(Bits)>(p + offset, true)) = bits;
#else
  *reinterpret_cast<Pack<T, V>*>(p + offset) = pack;
#endif
}

// Whether packs of 16 bytes may start at `address`.
inline bool pack_aligned(const void* address) { return reinterpret_cast<uintptr_t>(address) % 16 == 0; }

// Whether every operand of the layout is one run of consecutive elements (the same shape, nothing
// broadcast) whose first element is pack-aligned: the packed kernels' case.
template <size_t N>
bool packs_fit(const KernelLayout<N>& layout) {
  if (layout.axes != 1) return false;
  for (size_t k = 0; k < N; ++k) {
    if (layout.strides[k][0] != 1 || !pack_aligned(layout.bases[k])) return false;
  }
  return true;
}

}  // namespace kusari::kernels::cuda
