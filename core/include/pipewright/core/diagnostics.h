#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace pipewright {

// One problem found in user input, located by a JSON path such as
// "model.layers[3].out_features" so the user can find it in the file.
struct Diagnostic {
    std::string path;
    std::string message;
};

// Collects every problem at once, so that a user fixes a file in one pass
// instead of one error per run.
class Diagnostics {
  public:
    void add(std::string path, std::string message);
    void append(const Diagnostics& other);

    [[nodiscard]] bool empty() const { return items_.empty(); }
    [[nodiscard]] std::size_t size() const { return items_.size(); }
    [[nodiscard]] const std::vector<Diagnostic>& items() const { return items_; }
    [[nodiscard]] bool mentions(const std::string& path_prefix) const;

    // "path: message" lines, one per problem.
    [[nodiscard]] std::string format() const;

  private:
    std::vector<Diagnostic> items_;
};

// Thrown when input cannot be used; carries every diagnostic found.
class InputError : public std::runtime_error {
  public:
    explicit InputError(Diagnostics diagnostics);
    InputError(std::string path, std::string message);

    [[nodiscard]] const Diagnostics& diagnostics() const { return diagnostics_; }

  private:
    Diagnostics diagnostics_;
};

}  // namespace pipewright
