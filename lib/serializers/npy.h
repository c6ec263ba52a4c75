#pragma once
// Arrays to and from the bytes of NumPy's .npy format (the members of an .npz archive).

#include <optional>
#include <string>
#include <string_view>

#include <kusari/core/api.h>
#include <kusari/core/array.h>

namespace kusari::serializers {

// The NumPy type string kusari writes for `dtype` ('<f4', '|b1', ...); bfloat16, which NumPy lacks, is
// written as its bit pattern, '<u2'.
KUSARI_API std::string npy_descr(Dtype dtype);

// A complete .npy file (format 1.0, little-endian, C order) holding a copy of `array`'s elements.
KUSARI_API std::string to_npy(const Array& array);

// The array held by the .npy bytes (any format version, either byte order, C or Fortran order), as a
// new contiguous host array. When `stored_as` is given, the elements are taken as that dtype, whose
// item size must match the file's (how bfloat16 comes back from '<u2'). Malformed bytes throw IOError
// naming `source`.
KUSARI_API Array from_npy(std::string_view bytes, const std::string& source, std::optional<Dtype> stored_as = {});

// A .npy file holding `text` as a 0-d byte string (NumPy dtype '|S<n>'): metadata NumPy can show.
KUSARI_API std::string text_to_npy(std::string_view text);

// The text held by a .npy file of a 0-d byte string (trailing NULs removed, as NumPy does).
KUSARI_API std::string text_from_npy(std::string_view bytes, const std::string& source);

}  // namespace kusari::serializers
