#pragma once

// What this machine can still allocate, for checks made before a large
// allocation (a run's workers, a profile, an imported file or batch) so that
// they refuse in words instead of bringing the out-of-memory killer down.

#include <cstdint>

namespace pipewright {

// MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read (the
// callers then skip their check).
[[nodiscard]] std::int64_t available_memory_bytes();

}  // namespace pipewright
