#pragma once
// A vector that keeps up to N elements inline (no heap allocation), for shapes and strides that are
// created on every array operation. Trivially copyable element types only.

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

#include <kusari/core/api.h>

namespace kusari {

// std::vector-like storage with N inline slots and a heap fallback beyond them.
template <class T, size_t N>
class KUSARI_API SmallVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SmallVector() = default;
  // n copies of value.
  explicit SmallVector(size_t n, T value = T()) { resize(n, value); }
  // The listed elements.
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  // The elements of [first, last).
  template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  // The elements of a std::vector.
  SmallVector(const std::vector<T>& values) { assign(values.begin(), values.end()); }  // NOLINT: implicit on purpose
  SmallVector(const SmallVector& other) { copy_from(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      heap_.reset();
      capacity_ = N;
      size_ = 0;
      copy_from(other);
    }
    return *this;
  }
  SmallVector(SmallVector&& other) noexcept { take(std::move(other)); }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      heap_.reset();
      take(std::move(other));
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  // Appends one element.
  void push_back(T value) {
    reserve(size_ + 1);
    data()[size_++] = value;
  }
  // Removes the last element.
  void pop_back() { --size_; }
  // Inserts value before position and returns a pointer to it.
  T* insert(const T* position, T value) {
    const size_t at = static_cast<size_t>(position - data());
    reserve(size_ + 1);
    T* d = data();
    std::copy_backward(d + at, d + size_, d + size_ + 1);
    d[at] = value;
    ++size_;
    return d + at;
  }
  // Removes the element at position.
  T* erase(const T* position) {
    const size_t at = static_cast<size_t>(position - data());
    T* d = data();
    std::copy(d + at + 1, d + size_, d + at);
    --size_;
    return d + at;
  }
  // Grows (filling with value) or shrinks to n elements.
  void resize(size_t n, T value = T()) {
    reserve(n);
    std::fill(data() + std::min(n, size_), data() + n, value);
    size_ = n;
  }
  // Ensures room for n elements.
  void reserve(size_t n) {
    if (n <= capacity_) return;
    const size_t capacity = std::max(n, capacity_ * 2);
    std::unique_ptr<T[]> grown(new T[capacity]);
    std::copy(begin(), end(), grown.get());
    heap_ = std::move(grown);
    capacity_ = capacity;
  }
  // Removes every element.
  void clear() { size_ = 0; }
  // The elements as a std::vector.
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  bool operator==(const SmallVector& other) const {
    if (size_ != other.size_) return false;
    const T *a = data(), *b = other.data();
    for (size_t i = 0; i < size_; ++i) {
      if (!(a[i] == b[i])) return false;
    }
    return true;
  }

 private:
  template <class It>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    reserve(n);
    std::copy(first, last, data());
    size_ = n;
  }
  // Copies other into this fresh (inline) vector; the whole inline buffer at once, as a fixed-size copy.
  void copy_from(const SmallVector& other) {
    if (other.heap_) {
      assign(other.begin(), other.end());
      return;
    }
    std::copy(other.inline_, other.inline_ + N, inline_);
    size_ = other.size_;
  }
  void take(SmallVector&& other) {
    size_ = other.size_;
    capacity_ = other.capacity_;
    if (other.heap_) {
      heap_ = std::move(other.heap_);
    } else {
      std::copy(other.inline_, other.inline_ + N, inline_);
    }
    other.size_ = 0;
    other.capacity_ = N;
  }

  T inline_[N] = {};
  std::unique_ptr<T[]> heap_;
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace kusari
