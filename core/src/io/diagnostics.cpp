#include "pipewright/core/diagnostics.h"

#include <utility>

namespace pipewright {

void Diagnostics::add(std::string path, std::string message) {
    items_.push_back({std::move(path), std::move(message)});
}

void Diagnostics::append(const Diagnostics& other) {
    items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool Diagnostics::mentions(const std::string& path_prefix) const {
    for (const auto& d : items_) {
        if (d.path.compare(0, path_prefix.size(), path_prefix) == 0) {
            return true;
        }
    }
    return false;
}

std::string Diagnostics::format() const {
    std::string out;
    for (const auto& d : items_) {
        if (!out.empty()) {
            out += '\n';
        }
        out += d.path.empty() ? d.message : d.path + ": " + d.message;
    }
    return out;
}

namespace {
Diagnostics single(std::string path, std::string message) {
    Diagnostics d;
    d.add(std::move(path), std::move(message));
    return d;
}
}  // namespace

InputError::InputError(Diagnostics diagnostics)
    : std::runtime_error(diagnostics.format()), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(std::string path, std::string message)
    : InputError(single(std::move(path), std::move(message))) {}

}  // namespace pipewright
