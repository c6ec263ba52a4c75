// CUDA unary, binary, where, axpby and momentum-step kernels: one grid-stride kernel per operation over
// the function objects the CPU's loops call (elementwise_functions.h), computed in float for the half
// types, operands of any strides (broadcast ones too); unary and binary maps of contiguous operands load
// 16 bytes at a time (packs.cuh).

#include <kusari/core/kernel_table.h>
#include <kusari/kernels/cuda/detail/launch.cuh>
#include <kusari/kernels/cuda/detail/packs.cuh>
#include <kusari/kernels/cuda/detail/registration.h>
#include <kusari/kernels/detail/elementwise_functions.h>
#include <kusari/kernels/ops/elementwise.h>

namespace kusari::kernels::cuda {
namespace {

template <class T, class U, class F>
__global__ void unary_elements(KernelLayout<2> layout, F f) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    int64_t at[2];
    element_offsets(layout, i, at);
    element_at<U>(layout, 1, at[1]) = store<U>(f(load(element_at<T>(layout, 0, at[0]))));
  }
}

template <class T, class U, class F>
__global__ void binary_elements(KernelLayout<3> layout, F f) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    int64_t at[3];
    element_offsets(layout, i, at);
    element_at<U>(layout, 2, at[2]) =
        store<U>(f(load(element_at<T>(layout, 0, at[0])), load(element_at<T>(layout, 1, at[1]))));
  }
}

// The inputs of a packed map: one or two contiguous arrays of T.
template <class T, size_t I>
struct Inputs {
  const T* p[I];
};

// f of the inputs' values x[0] (and x[1]).
template <class U, class F, class C, size_t I>
__device__ inline U apply(F f, const C (&x)[I]) {
  if constexpr (I == 1) {
    return store<U>(f(x[0]));
  } else {
    return store<U>(f(x[0], x[1]));
  }
}

// unary_elements or binary_elements over contiguous operands (I inputs), V elements a load (the last
// n % V one by one).
template <class T, class U, class F, int V, size_t I>
__global__ void map_packs(Inputs<T, I> in, U* out, int64_t n, F f) {
  using C = compute_type_t<T>;
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x, step = int64_t{blockDim.x} * gridDim.x;
  const int64_t packs = n / V;
  for (int64_t p = first; p < packs; p += step) {
    Pack<T, V> loaded[I];
    for (size_t k = 0; k < I; ++k) loaded[k] = load_pack<T, V>(in.p[k], p * V);
    Pack<U, V> result;
#pragma unroll
    for (int lane = 0; lane < V; ++lane) {
      C x[I];
      for (size_t k = 0; k < I; ++k) x[k] = load(loaded[k].v[lane]);
      result.v[lane] = apply<U>(f, x);
    }
    store_pack<U, V>(out, p * V, result);
  }
  for (int64_t i = packs * V + first; i < n; i += step) {
    C x[I];
    for (size_t k = 0; k < I; ++k) x[k] = load(in.p[k][i]);
    out[i] = apply<U>(f, x);
  }
}

// Runs f over the elements of `arrays` (inputs, then the output of U): the packed kernel where the
// operands are contiguous and aligned (and U no wider than T), the general one otherwise.
template <class T, class U, size_t N, class F>
void run_map(const char* op, const std::array<const Array*, N>& arrays, F f) {
  const int index = device_of<N>(arrays, op);
  if (arrays[0]->size() == 0) return;
  DeviceGuard guard(index);
  const KernelLayout<N> layout = kernel_layout<N>(arrays, op);
  const cudaStream_t stream = current_stream(index);
  constexpr int V = kPackElements<T>;
  if (sizeof(U) <= sizeof(T) && packs_fit(layout)) {
    Inputs<T, N - 1> inputs;
    for (size_t k = 0; k + 1 < N; ++k) inputs.p[k] = reinterpret_cast<const T*>(layout.bases[k]);
    launch_kernel(&map_packs<T, U, F, V, N - 1>, blocks_for((layout.size + V - 1) / V), kThreads, stream,
        inputs, reinterpret_cast<U*>(layout.bases[N - 1]), layout.size, f);
  } else if constexpr (N == 2) {
    launch_kernel(&unary_elements<T, U, F>, blocks_for(layout.size), kThreads, stream, layout, f);
  } else {
    launch_kernel(&binary_elements<T, U, F>, blocks_for(layout.size), kThreads, stream, layout, f);
  }
  check(cudaGetLastError(), op);
}

template <class T>
__global__ void where_elements(KernelLayout<4> layout) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    int64_t at[4];
    element_offsets(layout, i, at);
    element_at<T>(layout, 3, at[3]) =
        element_at<bool>(layout, 0, at[0]) ? element_at<T>(layout, 1, at[1]) : element_at<T>(layout, 2, at[2]);
  }
}

template <class T, class C>
__global__ void momentum_step_elements(KernelLayout<3> layout, C momentum, C lr) {
  KUSARI_FOR_EACH_ELEMENT(i, layout.size) {
    int64_t at[3];
    element_offsets(layout, i, at);
    T& w = element_at<T>(layout, 0, at[0]);
    T& v = element_at<T>(layout, 1, at[1]);
    momentum_step_element(w, v, load(element_at<T>(layout, 2, at[2])), momentum, lr);
  }
}

void unary_kernel(UnaryOp op, double param, const Array& x, const Array& out) {
  visit_dtype(x.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      if (op != UnaryOp::logical_not) throw DtypeError("unary kernel: only logical_not is defined for bool");
      run_map<bool, bool, 2>("unary kernel", {&x, &out}, elementwise::LogicalNot<bool>{});
    } else {
      using C = compute_type_t<T>;
      elementwise::visit_unary<C>(op, param, x.dtype(), [&]<class F>(F f) {
        run_map<T, elementwise::result_element_t<T, F, C>, 2>("unary kernel", {&x, &out}, f);
      });
    }
  });
}

void binary_kernel(BinaryOp op, const Array& a, const Array& b, const Array& out) {
  visit_dtype(a.dtype(), [&]<class D>() {
    using T = std::conditional_t<std::is_same_v<D, bool>, uint8_t, D>;  // bool bytes compute as 0 and 1
    using C = compute_type_t<T>;
    elementwise::visit_binary<C>(op, [&]<class F>(F f) {
      run_map<T, elementwise::result_element_t<T, F, C, C>, 3>("binary kernel", {&a, &b, &out}, f);
    });
  });
}

void where_kernel(const Array& cond, const Array& a, const Array& b, const Array& out) {
  visit_dtype(out.dtype(), [&]<class T>() { launch<4>("where kernel", {&cond, &a, &b, &out}, where_elements<T>); });
}

void axpby_kernel(double alpha, const Array& dst, double beta, const Array& x) {
  visit_floating_dtype(dst.dtype(), "axpby kernel", [&]<class T>() {
    using C = compute_type_t<T>;
    using F = elementwise::Axpby<C>;
    run_map<T, T, 3>("axpby kernel", {&dst, &x, &dst}, F{static_cast<C>(alpha), static_cast<C>(beta)});
  });
}

void momentum_step_kernel(const Array& w, const Array& v, const Array& g, double momentum, double lr) {
  visit_floating_dtype(w.dtype(), "momentum_step kernel", [&]<class T>() {
    using C = compute_type_t<T>;
    launch<3>("momentum_step kernel", {&w, &v, &g}, momentum_step_elements<T, C>, static_cast<C>(momentum),
              static_cast<C>(lr));
  });
}

}  // namespace

void register_elementwise_kernels() {
  install_kernel<kernel_ops::Unary>(DeviceType::cuda, "cuda", unary_kernel);
  install_kernel<kernel_ops::Binary>(DeviceType::cuda, "cuda", binary_kernel);
  install_kernel<kernel_ops::Where>(DeviceType::cuda, "cuda", where_kernel);
  install_kernel<kernel_ops::Axpby>(DeviceType::cuda, "cuda", axpby_kernel);
  install_kernel<kernel_ops::MomentumStep>(DeviceType::cuda, "cuda", momentum_step_kernel);
}

}  // namespace kusari::kernels::cuda
