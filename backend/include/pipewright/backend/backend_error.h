#pragma once

#include <stdexcept>

namespace pipewright::backend {

// Every failure the backend expects and explains (a layer it cannot build, a
// precision it cannot train in, a rank that never answered, a record that
// does not fit): the message is for the user as it stands. Anything else that
// reaches the top is a defect, reported as an internal error.
class BackendError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

}  // namespace pipewright::backend
