#pragma once
// Errors thrown at the boundary where a bad value comes in. Every message names what was expected
// and what was found, with the values, so that a user on a cluster can fix the flag or the file.

#include <array>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace halo3d {

// Base of every halo3d error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A shape, extent or grid that cannot work (mismatched channels, a block thinner than its halo,
// ...).
class ShapeError : public Error {
 public:
  using Error::Error;
};

// A malformed user input: a flag, a config value, a grid string.
class InputError : public Error {
 public:
  using Error::Error;
};

// A plan that needs more memory than a rank has: names the bytes needed, the limit and the largest
// tensors.
class ResourceError : public Error {
 public:
  using Error::Error;
};

namespace detail {

template <class T, std::size_t N>
std::ostream& streamArray(std::ostream& os, const std::array<T, N>& a) {
  os << '(';
  for (std::size_t i = 0; i < N; ++i)
    os << (i ? ", " : "") << a[i];
  return os << ')';
}

template <class T>
void streamOne(std::ostream& os, const T& value) {
  os << value;
}
template <class T, std::size_t N>
void streamOne(std::ostream& os, const std::array<T, N>& value) {
  streamArray(os, value);
}
template <class T>
void streamOne(std::ostream& os, const std::vector<T>& value) {
  os << '[';
  for (std::size_t i = 0; i < value.size(); ++i)
    os << (i ? ", " : "") << value[i];
  os << ']';
}

}  // namespace detail

// Concatenates its arguments into a message; std::array and std::vector print as tuples and lists.
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (detail::streamOne(os, args), ...);
  return os.str();
}

// Throws ErrorType(concat(args...)) unless `condition` holds.
template <class ErrorType = Error, class... Args>
void require(bool condition, const Args&... args) {
  if (!condition) throw ErrorType(concat(args...));
}

}  // namespace halo3d
