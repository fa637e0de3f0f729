#pragma once

#include <vector>

#include "pipewright/core/analysis.h"

namespace pipewright {

// Replicas that run alike: the same device figures rank by rank and the
// same links between neighbouring stages. The simulator times one replica
// of each class, so symmetric replicas cost one simulation, not D.
struct ReplicaClasses {
    std::vector<int> representative;  // per class: its first replica, simulated for all
    std::vector<int> class_of;        // per replica: its class

    [[nodiscard]] std::size_t size() const { return representative.size(); }
};

[[nodiscard]] ReplicaClasses replica_classes(const AnalyzedProject& project);

// The project as replica `r` runs it: its devices and their figures in
// place of the first replica's (a copy; the schedule is shared by value).
[[nodiscard]] AnalyzedProject as_replica(const AnalyzedProject& project, int r);

}  // namespace pipewright
