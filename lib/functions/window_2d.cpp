#include <kusari/functions/window_2d.h>

#include <ostream>

namespace kusari::functions {

std::ostream& operator<<(std::ostream& out, const Int2& pair) { return out << '(' << pair.h << ", " << pair.w << ')'; }

int64_t conv_outsize(int64_t size, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool cover_all) {
  const int64_t span = (kernel - 1) * dilation + 1;
  const int64_t room = size + 2 * pad - span;
  if (room < 0) return 0;
  return (cover_all ? room + stride - 1 : room) / stride + 1;
}

int64_t deconv_outsize(int64_t size, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool cover_all) {
  const int64_t span = (kernel - 1) * dilation + 1;
  return cover_all ? stride * (size - 1) + span - stride + 1 - 2 * pad : stride * (size - 1) + span - 2 * pad;
}

void require_nchw(const Variable& v, const char* op, const char* name) {
  if (!v.defined()) throw ValueError(cat(op, ": ", name, " is undefined"));
  if (v.ndim() != 4) {
    throw ShapeError(cat(op, ": expected ", name, " with 4 axes (N, C, H, W), got shape ", v.shape()));
  }
  if (!is_floating(v.dtype())) throw DtypeError(cat(op, ": expected a floating dtype for ", name, ", got ", v.dtype()));
}

void require_at_least(const Int2& pair, int64_t minimum, const char* op, const char* what) {
  if (pair.h < minimum || pair.w < minimum) {
    throw ValueError(cat(op, ": expected ", what, " of at least ", minimum, ", got ", pair));
  }
}

}  // namespace kusari::functions
