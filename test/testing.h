#pragma once
// Helpers shared by the doctest suites.

#include <doctest/doctest.h>

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <kusari/kusari.h>

#include "case_report.h"

namespace kusari::testing {

// Uniform values in [low, high) of the given shape and dtype (deterministic per seed).
inline Array random(const Shape& shape, uint64_t seed, Dtype dtype = Dtype::float64, double low = -1, double high = 1) {
  return Array::uniform(shape, low, high, seed, dtype);
}

// Asserts that a and b have one shape and agree within atol + rtol * |b| everywhere.
inline void expect_close(const Array& a, const Array& b, double atol = 1e-6, double rtol = 1e-5) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("flat element ", i, ": ", x[i], " vs ", y[i]);
    CHECK(std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i]));
  }
}

// Asserts that the values of a equal `expected` (row-major) within atol.
inline void expect_values(const Array& a, const std::vector<double>& expected, double atol = 1e-6) {
  const std::vector<double> x = a.to_vector<double>();
  REQUIRE(x.size() == expected.size());
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("flat element ", i, ": ", x[i], " vs ", expected[i]);
    CHECK(std::abs(x[i] - expected[i]) <= atol);
  }
}

// Asserts that `body` throws an Error of type E whose message contains every fragment.
template <class E = Error>
void expect_error(const std::function<void()>& body, const std::vector<std::string>& fragments) {
  try {
    body();
    FAIL("expected an exception");
  } catch (const E& e) {
    const std::string message = e.what();
    for (const std::string& fragment : fragments) {
      INFO("message: ", message);
      CHECK(message.find(fragment) != std::string::npos);
    }
  }
}

// Tolerances of the forward comparison for each dtype against a float64 reference.
inline double forward_tolerance(Dtype dtype) {
  switch (dtype) {
    case Dtype::float16: return 5e-3;
    case Dtype::bfloat16: return 3e-2;
    case Dtype::float32: return 1e-5;
    default: return 1e-12;
  }
}

// Runs f on the inputs cast to float32, float16 and bfloat16 and compares every floating output with
// the float64 result (relative to max(1, |reference|)); integer inputs are passed unchanged.
inline void check_forward_dtypes(const gradient_check::Function& f, const std::vector<Array>& inputs,
                                 double tolerance_scale = 1) {
  auto run = [&](Dtype dtype) {
    std::vector<Variable> xs;
    for (const Array& x : inputs) xs.emplace_back(is_floating(x.dtype()) ? x.astype(dtype) : x, false);
    return f(xs);
  };
  const std::vector<Variable> reference = run(Dtype::float64);
  for (Dtype dtype : {Dtype::float32, Dtype::float16, Dtype::bfloat16}) {
    const std::vector<Variable> ys = run(dtype);
    REQUIRE(ys.size() == reference.size());
    for (size_t k = 0; k < ys.size(); ++k) {
      if (!is_floating(reference[k].dtype())) {
        CHECK(ys[k].data().to_vector<double>() == reference[k].data().to_vector<double>());
        continue;
      }
      INFO("dtype ", dtype_name(dtype), ", output ", k);
      CHECK(ys[k].dtype() == dtype);
      const double tol = forward_tolerance(dtype) * tolerance_scale;
      expect_close(ys[k].data(), reference[k].data(), tol, tol);
    }
  }
}

// Gradient check in float64 with random output gradients (and a double-backward check when asked).
inline void check_gradients(const gradient_check::Function& f, const std::vector<Array>& inputs,
                            bool double_backward = true, gradient_check::CheckOptions options = {}) {
  std::vector<Variable> xs;
  for (const Array& x : inputs) xs.emplace_back(x, false);
  const std::vector<Variable> ys = f(xs);
  std::vector<Array> gys;
  for (size_t k = 0; k < ys.size(); ++k) {
    gys.push_back(is_floating(ys[k].dtype()) ? random(ys[k].shape(), 1000 + k) : Array());
  }
  gradient_check::check_backward(f, inputs, gys, options);
  if (double_backward) {
    std::vector<Array> ggxs;
    for (size_t i = 0; i < inputs.size(); ++i) ggxs.push_back(random(inputs[i].shape(), 2000 + i));
    gradient_check::check_double_backward(f, inputs, gys, ggxs, options);
  }
}

// Adapts a one-input, one-output function to gradient_check::Function.
inline gradient_check::Function unary(std::function<Variable(const Variable&)> f) {
  return [f](const std::vector<Variable>& x) { return std::vector<Variable>{f(x[0])}; };
}

// Adapts a two-input, one-output function to gradient_check::Function.
inline gradient_check::Function binary(std::function<Variable(const Variable&, const Variable&)> f) {
  return [f](const std::vector<Variable>& x) { return std::vector<Variable>{f(x[0], x[1])}; };
}

// A fresh directory under the system temporary directory, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kusari-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                 ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // The path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Same as file(name).
  std::string operator/(const std::string& name) const { return file(name); }
  // Names of the entries of the directory, sorted.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  // The directory itself.
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// Writes `bytes` to `path`, replacing the file.
inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

}  // namespace kusari::testing
