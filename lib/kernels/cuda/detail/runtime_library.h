#pragma once
// Internal to the CUDA backend: toolkit libraries loaded when first used rather than with libkusari.
// cuBLASLt's static initialisation alone costs every process that links it about half a second (0.59 s
// on the 2-core development machine), paid by each rank of a CPU-only run and each test program; CUPTI
// is needed by the profiler alone.

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace kusari::kernels::cuda::detail {

// A library opened on first use (never closed) and the functions taken from it.
struct RuntimeLibrary {
  void* handle = nullptr;
  std::string name;     // the file name it was opened by (or the first one tried)
  std::string missing;  // why it or one of its functions is unusable ("" when all resolved)

  // `symbol` as the type of `slot` (nullptr when absent, noting the first absent one in `missing`).
  template <class F>
  void resolve(const char* symbol, F& slot) {
    slot = handle ? reinterpret_cast<F>(dlsym(handle, symbol)) : nullptr;
    if (!slot && missing.empty()) missing = name + " has no " + symbol;
  }
};

// The first of `names` that dlopen loads (RTLD_NOW | RTLD_LOCAL; found as the dynamic loader finds
// libkusari's own dependencies: LD_LIBRARY_PATH, libkusari's run path to cuda-root, the system's
// directories); when none loads, `missing` is "cannot load <first name>: <dlerror's reason>".
RuntimeLibrary open_runtime_library(std::initializer_list<const char*> names);

}  // namespace kusari::kernels::cuda::detail
