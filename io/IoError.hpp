#pragma once
// The error of io/: a file that is missing, unreadable, corrupt or not in the expected layout. The
// message names the file and, where one is at fault, the dataset.

#include "halo3d/core/Error.hpp"

namespace halo3d {

class IoError : public Error {
 public:
  using Error::Error;
};

}  // namespace halo3d
