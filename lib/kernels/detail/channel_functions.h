#pragma once
// Internal to the backends, compiled for the host and (under nvcc) for the device: the per-element
// rule of ChannelGate (core/channel_gate.h) that batch normalization's channel kernels apply.

#include <kusari/core/detail/host_device.h>

namespace kusari::kernels {

// Whether a gate keeps an element whose gate input is `input`: scale·input + shift is not <= 0 (NaN
// is kept, so it propagates as through a ReLU).
template <class C>
KUSARI_HOST_DEVICE inline bool gate_keeps(C scale, C input, C shift) {
  return !(scale * input + shift <= C(0));
}

}  // namespace kusari::kernels
