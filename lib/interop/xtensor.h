#pragma once
// Zero-copy views between kusari arrays and xtensor: as_xtensor views a host array of any rank with
// its strides (writes through the view change the array); from_xtensor builds an array on an
// xtensor container's memory (or a copy when asked). Elements are the C++ types of dtype.h
// (kusari::float16_t and bfloat16_t for the half types).

#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xstrided_view.hpp>

#include <kusari/interop/external_memory.h>

namespace kusari::interop {

namespace xtensor_detail {
// The elements an array spans, adapted as a 1-D buffer the view does not own (xtensor's adaptors
// need their buffer's size to equal their element count, so a view with gaps or repeats cannot be
// one adaptor).
template <class T>
auto span_buffer(T* data, std::size_t span) {
  return xt::adapt(data, span, xt::no_ownership(), std::vector<std::size_t>{span});
}
// A view of the `span` elements at `data` with the given shape and element strides.
template <class T>
auto strided(T* data, std::size_t span, std::vector<std::size_t> shape, std::vector<std::ptrdiff_t> strides) {
  return xt::strided_view<xt::layout_type::dynamic>(span_buffer(data, span), std::move(shape), std::move(strides), 0,
                                                    xt::layout_type::dynamic);
}
}  // namespace xtensor_detail

// The view as_xtensor returns: an xt::xstrided_view over the array's elements.
template <class T>
using XtensorView = decltype(xtensor_detail::strided(std::declval<T*>(), std::size_t{}, {}, {}));

// An xtensor view of a host array of element type T, any rank, with the array's strides; throws on
// another dtype, a device other than the host or a negative stride. The view does not keep the memory
// alive: the caller keeps the array (or another view of its storage) while the view is used.
template <class T>
XtensorView<T> as_xtensor(const Array& array) {
  constexpr const char* who = "interop::as_xtensor";
  require_host_array(array, ElementDtype<T>::value, who);
  require_forward_strides(array, who, "xtensor");
  std::vector<std::size_t> shape;
  std::vector<std::ptrdiff_t> strides;
  std::size_t span = array.size() == 0 ? 0 : 1;
  for (int64_t axis = 0; axis < array.ndim(); ++axis) {
    const int64_t extent = array.shape()[axis];
    // xtensor gives an axis of extent 1 stride 0 (its broadcasting relies on it).
    const int64_t stride = extent == 1 ? 0 : array.strides()[static_cast<size_t>(axis)];
    shape.push_back(static_cast<std::size_t>(extent));
    strides.push_back(static_cast<std::ptrdiff_t>(stride));
    if (span > 0) span += static_cast<std::size_t>((extent - 1) * stride);
  }
  return xtensor_detail::strided(static_cast<T*>(array.host_data()), span, std::move(shape), std::move(strides));
}

namespace xtensor_detail {
// An array over the elements of the strided xtensor expression `x`, kept alive by `owner`.
template <class E>
Array share(const E& x, std::shared_ptr<void> owner) {
  using T = std::remove_const_t<typename E::value_type>;
  Shape shape;
  std::vector<int64_t> strides;
  for (std::size_t axis = 0; axis < x.dimension(); ++axis) {
    const auto stride = static_cast<int64_t>(x.strides()[axis]);
    if (stride < 0 && x.shape()[axis] > 1) {
      throw ValueError(cat("interop::from_xtensor: expected non-negative strides, got stride ", stride, " on axis ",
                           axis));
    }
    shape.push_back(static_cast<int64_t>(x.shape()[axis]));
    strides.push_back(stride);
  }
  void* data = const_cast<T*>(x.data() + x.data_offset());
  return array_over_host_memory(data, shape, strides, ElementDtype<T>::value, std::move(owner));
}
}  // namespace xtensor_detail

// An array sharing the memory of `x` (an xarray, xtensor, or adaptor with data()): writes through
// either are seen by the other; the caller keeps `x` alive while the array lives.
template <class E>
  requires requires(E& e) { e.data(); e.strides(); e.data_offset(); }
Array from_xtensor(E& x) {
  static_assert(!std::is_const_v<E>, "from_xtensor shares only writable memory; pass interop::copy for a const one");
  return xtensor_detail::share(x, nullptr);
}

// An array sharing the memory of `*x` that keeps `*x` alive as long as any array views it (for a view
// or adaptor, only that object: the memory it points at stays the caller's to keep).
template <class E>
Array from_xtensor(std::shared_ptr<E> x) {
  static_assert(!std::is_const_v<E>, "from_xtensor shares only writable memory; pass interop::copy for a const one");
  if (!x) throw ValueError("interop::from_xtensor: expected a container, got a null shared_ptr");
  const E& container = *x;
  return xtensor_detail::share(container, std::move(x));
}

// A contiguous row-major array holding a copy of the values of any xtensor expression.
template <class E>
Array from_xtensor(const xt::xexpression<E>& x, Copy) {
  using T = std::remove_const_t<typename E::value_type>;
  auto owned = std::make_shared<xt::xarray<T, xt::layout_type::row_major>>(x.derived_cast());
  return xtensor_detail::share(*owned, owned);
}

}  // namespace kusari::interop
