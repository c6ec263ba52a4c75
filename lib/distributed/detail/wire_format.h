#pragma once
// The wire format of all-reduce buffers: float32, float16 or bfloat16 elements, converted from and to
// float32 with fused scaling, and summed in float32 (then rounded to the wire dtype). Internal header.

#include <cstdint>

#include <kusari/core/dtype.h>

namespace kusari::distributed::wire {

// Throws DtypeError naming `op` unless dtype is float32, float16 or bfloat16.
void check_wire_dtype(Dtype dtype, const char* op);
// dst[i] = wire(src[i] * scale): this rank's contribution on the wire.
void pack(const float* src, int64_t n, float scale, Dtype wire, void* dst);
// dst[i] = float(src[i]) * scale: a wire result back in float32.
void unpack(const void* src, Dtype wire, int64_t n, float scale, float* dst);
// inout[i] = wire(float(inout[i]) + src[i] * scale): adds this rank's contribution to received partial sums.
void accumulate(const float* src, int64_t n, float scale, Dtype wire, void* inout);
// inout[i] = wire(float(inout[i]) + float(in[i])): combines two partial sums.
void add(const void* in, Dtype wire, int64_t n, void* inout);
// The largest |src[i]|, or inf when any element is inf or NaN (0 for n = 0).
float max_abs(const float* src, int64_t n);

}  // namespace kusari::distributed::wire
