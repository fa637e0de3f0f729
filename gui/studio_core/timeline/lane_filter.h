#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipewright::gui {

// Which lanes the timeline shows, from what a person types: terms separated
// by spaces or commas, a lane shown when any term matches it.
//  - digits alone are a rank, "8-15" a range of ranks (both ends included),
//    "8-" every rank from 8 on;
//  - anything else is part of the device path, case ignored: "gpu3",
//    "node1/" (node1's devices but not node10's), "c0/gpu".
class LaneFilter {
  public:
    LaneFilter() = default;
    [[nodiscard]] static LaneFilter parse(std::string_view text);

    // No term: every lane is shown.
    [[nodiscard]] bool empty() const { return ranges_.empty() && words_.empty(); }
    [[nodiscard]] bool matches(int rank, std::string_view device) const;
    // The terms that were not understood, in words (empty when all were).
    [[nodiscard]] const std::string& error() const { return error_; }

  private:
    std::vector<std::pair<int, int>> ranges_;  // inclusive
    std::vector<std::string> words_;           // lower case
    std::string error_;
};

}  // namespace pipewright::gui
