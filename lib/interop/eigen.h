#pragma once
// Zero-copy views between kusari arrays and Eigen matrices: as_eigen maps a 1-D or 2-D host array
// with its strides (writes through the map change the array); from_eigen builds an array on a
// matrix's memory (or a copy when asked). float16 and bfloat16 are Eigen::half and Eigen::bfloat16.

#include <memory>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include <kusari/interop/external_memory.h>

namespace kusari::interop {

// Eigen::half elements are kusari's float16.
template <>
struct ElementDtype<Eigen::half> {
  static constexpr Dtype value = Dtype::float16;
};
// Eigen::bfloat16 elements are kusari's bfloat16.
template <>
struct ElementDtype<Eigen::bfloat16> {
  static constexpr Dtype value = Dtype::bfloat16;
};

// The map as_eigen returns: a row-major dynamic matrix with runtime outer (row) and inner (column)
// strides in elements.
template <class T>
using EigenView = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, Eigen::Unaligned,
                             Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

// A map of a 1-D (as an n×1 column) or 2-D host array of element type T; throws on another dtype, a
// device other than the host, another rank or a negative stride. The map does not keep the memory
// alive: the caller keeps the array (or another view of its storage) while the map is used.
template <class T>
EigenView<T> as_eigen(const Array& array) {
  constexpr const char* who = "interop::as_eigen";
  require_host_array(array, ElementDtype<T>::value, who);
  if (array.ndim() != 1 && array.ndim() != 2) {
    throw ShapeError(cat(who, ": expected a 1-D or 2-D array, got shape ", array.shape()));
  }
  require_forward_strides(array, who, "Eigen");
  const auto& strides = array.strides();
  const Eigen::Index rows = array.shape()[0];
  const Eigen::Index cols = array.ndim() == 2 ? array.shape()[1] : 1;
  const Eigen::Index row_stride = strides[0];
  const Eigen::Index col_stride = array.ndim() == 2 ? strides[1] : 1;
  return EigenView<T>(static_cast<T*>(array.host_data()), rows, cols,
                      Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(row_stride, col_stride));
}

namespace eigen_detail {
// The shape and element strides of a directly accessible Eigen expression: 1-D for a vector type,
// else 2-D.
template <class D>
std::pair<Shape, std::vector<int64_t>> layout_of(const Eigen::DenseBase<D>& m) {
  const D& d = m.derived();
  if constexpr (D::IsVectorAtCompileTime) {
    return {Shape{static_cast<int64_t>(d.size())}, {static_cast<int64_t>(d.innerStride())}};
  } else {
    const auto inner = static_cast<int64_t>(d.innerStride());
    const auto outer = static_cast<int64_t>(d.outerStride());
    Shape shape{static_cast<int64_t>(d.rows()), static_cast<int64_t>(d.cols())};
    if constexpr (D::IsRowMajor) return {shape, {outer, inner}};
    else return {shape, {inner, outer}};
  }
}

// An array over the memory of `m`, kept alive by `owner`.
template <class D>
Array share(const Eigen::DenseBase<D>& m, std::shared_ptr<void> owner) {
  static_assert(bool(Eigen::internal::traits<D>::Flags & Eigen::DirectAccessBit),
                "from_eigen shares memory only with expressions that have it (a Matrix, Array, Map or Block); "
                "pass interop::copy for others");
  static_assert(bool(Eigen::internal::traits<D>::Flags & Eigen::LvalueBit),
                "from_eigen shares only writable memory (an array may be written through); pass interop::copy "
                "for a const Map, Ref or Block");
  using T = std::remove_const_t<typename D::Scalar>;
  auto [shape, strides] = layout_of(m);
  for (size_t axis = 0; axis < strides.size(); ++axis) {
    if (strides[axis] < 0 && shape[static_cast<int64_t>(axis)] > 1) {
      throw ValueError(cat("interop::from_eigen: expected non-negative strides, got stride ", strides[axis],
                           " on axis ", axis));
    }
  }
  void* data = const_cast<T*>(m.derived().data());
  return array_over_host_memory(data, shape, strides, ElementDtype<T>::value, std::move(owner));
}
}  // namespace eigen_detail

// An array sharing the memory of `m` (a Matrix, Array, Map or Block): writes through either are
// seen by the other; the caller keeps `m` alive while the array lives. A vector type gives a 1-D
// array, anything else a 2-D one with the matrix's strides.
template <class D>
Array from_eigen(Eigen::DenseBase<D>& m) {
  return eigen_detail::share(m, nullptr);
}

// An array sharing the memory of `*m` that keeps `*m` alive as long as any array views it (for a Map
// or Block, only that object: the memory it points at stays the caller's to keep).
template <class M>
Array from_eigen(std::shared_ptr<M> m) {
  static_assert(!std::is_const_v<M>, "from_eigen shares only writable memory; pass interop::copy for a const matrix");
  if (!m) throw ValueError("interop::from_eigen: expected a matrix, got a null shared_ptr");
  const M& matrix = *m;
  return eigen_detail::share(matrix, std::move(m));
}

// A contiguous row-major array holding a copy of the values of any Eigen expression.
template <class D>
Array from_eigen(const Eigen::DenseBase<D>& m, Copy) {
  using T = typename D::Scalar;
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  auto owned = std::make_shared<RowMajor>(m.derived());
  Array shared = eigen_detail::share(*owned, owned);
  if constexpr (D::IsVectorAtCompileTime) return shared.reshape(Shape{static_cast<int64_t>(m.size())});
  else return shared;
}

}  // namespace kusari::interop
