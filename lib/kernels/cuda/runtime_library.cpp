#include <kusari/kernels/cuda/detail/runtime_library.h>

namespace kusari::kernels::cuda::detail {

RuntimeLibrary open_runtime_library(std::initializer_list<const char*> names) {
  RuntimeLibrary library;
  std::string first_reason;
  for (const char* name : names) {
    if ((library.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
      library.name = name;
      return library;
    }
    if (first_reason.empty()) {
      const char* reason = dlerror();
      first_reason = reason ? reason : "not found";
    }
  }
  library.name = names.size() > 0 ? *names.begin() : "";
  library.missing = "cannot load " + library.name + ": " + first_reason;
  return library;
}

}  // namespace kusari::kernels::cuda::detail
