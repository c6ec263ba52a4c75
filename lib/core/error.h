#pragma once
// Error kinds thrown by kusari; every message names the operation, what was expected and what came.

#include <sstream>
#include <stdexcept>
#include <string>

#include <kusari/core/api.h>

namespace kusari {

// Base of every exception kusari throws.
class KUSARI_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Shapes that do not fit the operation (including broadcasting failures).
class KUSARI_API ShapeError : public Error {
 public:
  using Error::Error;
};

// A dtype the operation does not accept, or two dtypes that differ.
class KUSARI_API DtypeError : public Error {
 public:
  using Error::Error;
};

// Arrays on different devices, or a device with no kernel for an operation.
class KUSARI_API DeviceError : public Error {
 public:
  using Error::Error;
};

// An axis or index out of range.
class KUSARI_API IndexError : public Error {
 public:
  using Error::Error;
};

// A value that is out of the accepted domain (bad option, released array, ...).
class KUSARI_API ValueError : public Error {
 public:
  using Error::Error;
};

// A file that cannot be opened, read or written, or whose contents are corrupt or truncated.
class KUSARI_API IOError : public Error {
 public:
  using Error::Error;
};

// Concatenates any streamable values into one string (used to build error messages).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace kusari
