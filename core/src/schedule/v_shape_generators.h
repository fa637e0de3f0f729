#pragma once

// Schedules over a V-shaped placement: 2p stages on p devices, stage s and
// stage 2p-1-s on device s, so that the pipeline runs down the devices and
// back. Not part of the public API; generate_schedule dispatches here.

#include <string_view>
#include <vector>

#include "schedule/schedule_layout.h"

namespace pipewright::detail {

Schedule make_zbv(std::string_view name, const std::vector<int>& stage_rank, const Layout& layout);
Schedule make_dualpipev(std::string_view name, const std::vector<int>& stage_rank,
                        const Layout& layout);

}  // namespace pipewright::detail
