#pragma once

// The machine's name, as profiles and calibrations record where they were
// measured ("" when the system does not say).

#include <unistd.h>

#include <array>
#include <string>

namespace pipewright::backend {

inline std::string host_name() {
    std::array<char, 256> name{};
    if (::gethostname(name.data(), name.size() - 1) != 0) {
        return "";
    }
    return name.data();
}

}  // namespace pipewright::backend
