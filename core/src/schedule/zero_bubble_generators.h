#pragma once

// The zero-bubble generators (Qi et al., "Zero Bubble Pipeline Parallelism"):
// the backward is split into the input gradient I, which the previous stage
// waits for, and the weight gradient W, which nothing waits for and so fills
// the bubbles. Not part of the public API; generate_schedule dispatches here.

#include <string_view>
#include <vector>

#include "schedule/schedule_layout.h"

namespace pipewright::detail {

Schedule make_zb_h1(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout);
Schedule make_zb_h2(std::string_view name, const std::vector<int>& stage_rank,
                    const Layout& layout);
Schedule make_interleaved_zb(std::string_view name, const std::vector<int>& stage_rank,
                             const Layout& layout);

}  // namespace pipewright::detail
