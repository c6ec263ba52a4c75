#pragma once
// Error kinds thrown by kusari; every message names the operation, what was expected and what came.

#include <sstream>
#include <stdexcept>
#include <string>

namespace kusari {

// Base of every exception kusari throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Shapes that do not fit the operation (including broadcasting failures).
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A dtype the operation does not accept, or two dtypes that differ.
class DtypeError : public Error {
 public:
  using Error::Error;
};

// Arrays on different devices, or a device with no kernel for an operation.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// An axis or index out of range.
class IndexError : public Error {
 public:
  using Error::Error;
};

// A value that is out of the accepted domain (bad option, released array, ...).
class ValueError : public Error {
 public:
  using Error::Error;
};

// A file that cannot be read, or whose contents are truncated or malformed (the message names the file).
class IOError : public Error {
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
