#pragma once

// What every schedule generator needs from the stage placement, checked once
// so that each generator adds only its own rules. Not part of the public API.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/schedule.h"

namespace pipewright::detail {

struct Layout {
    int stages = 0;
    int ranks = 0;
    int microbatches = 0;
    std::vector<std::vector<int>> local_stages;  // per rank, ascending
};

inline std::size_t idx(int i) {
    return static_cast<std::size_t>(i);
}

inline Action act(int stage, ActionType type, int mb) {
    return Action{stage, type, mb};
}

std::string stages_words(long long n);
std::string devices_words(long long n);
std::string microbatches_words(long long n);

// Throws ScheduleError for no stages, no micro-batches, a negative device or
// a device without a stage.
Layout check_layout(std::string_view name, const std::vector<int>& stage_rank, int microbatches);

// A schedule named `name` for the placement, with no actions yet.
Schedule empty_schedule(std::string_view name, const std::vector<int>& stage_rank,
                        const Layout& layout);

// Stage s on device s, one each (1f1b, zb-h1, zb-h2). The message suggests
// `looped_alternative` for several stages per device.
void require_one_stage_per_device(std::string_view name, const std::vector<int>& stage_rank,
                                  const Layout& layout, std::string_view looped_alternative);

void require_microbatches_at_least_stages(std::string_view name, const Layout& layout);

// Megatron's looped placement: the same number of stages on every device, at
// least `fewest` each, stage s on device s mod devices. Returns the stages
// per device. The message suggests `alternative` for other placements.
int require_looped_placement(std::string_view name, const std::vector<int>& stage_rank,
                             const Layout& layout, int fewest, std::string_view alternative);

}  // namespace pipewright::detail
