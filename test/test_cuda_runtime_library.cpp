// Toolkit libraries loaded on first use (kernels/cuda/detail/runtime_library.h), in a CUDA build's host
// suite (no GPU needed): starting kusari does not load cuBLASLt, opening it by its versioned name does,
// and a library or function that is not there is named in the reason.

#include <doctest/doctest.h>

#include <cublasLt.h>

#include <string>

#include <kusari/core/array.h>
#include <kusari/kernels/routines.h>
#include <kusari/kernels/cuda/detail/runtime_library.h>

using namespace kusari;
using namespace kusari::kernels::cuda::detail;

namespace {

// libcublasLt's file name at the major version kusari was built against.
std::string cublaslt_file() { return "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR); }

}  // namespace

TEST_CASE("kusari starts and computes on the CPU without loading cuBLASLt") {
  const Array product = ops::matmul(Array::ones({4, 4}), Array::ones({4, 4}));
  CHECK(product.to_vector<float>()[0] == 4.0f);
  CHECK(dlopen(cublaslt_file().c_str(), RTLD_NOW | RTLD_NOLOAD) == nullptr);
}

TEST_CASE("cuBLASLt opens by its versioned name and its functions resolve") {
  RuntimeLibrary library = open_runtime_library({"libkusari-absent.so.1", cublaslt_file().c_str()});
  REQUIRE(library.handle != nullptr);
  CHECK(library.name == cublaslt_file());
  decltype(&cublasLtGetVersion) version = nullptr;
  library.resolve("cublasLtGetVersion", version);
  REQUIRE((version != nullptr));
  CHECK(static_cast<int>(version() / 10000) == CUBLAS_VER_MAJOR);
  CHECK(library.missing.empty());
}

TEST_CASE("a missing library or function is named with the reason") {
  RuntimeLibrary absent = open_runtime_library({"libkusari-absent.so.1", "libkusari-absent.so"});
  CHECK(absent.handle == nullptr);
  CHECK(absent.missing.rfind("cannot load libkusari-absent.so.1: ", 0) == 0);
  CHECK(absent.missing.find("libkusari-absent.so.1") != std::string::npos);
  void (*slot)() = nullptr;
  absent.resolve("anything", slot);
  CHECK((slot == nullptr));

  RuntimeLibrary library = open_runtime_library({cublaslt_file().c_str()});
  library.resolve("cublasLtNoSuchFunction", slot);
  library.resolve("cublasLtNoOtherFunction", slot);
  CHECK((slot == nullptr));
  CHECK(library.missing == cublaslt_file() + " has no cublasLtNoSuchFunction");
}
