#include "execution/recomputation_units.h"

#include <algorithm>
#include <string>

#include "pipewright/core/recomputation_units.h"

namespace pipewright::backend {

StageUnits::StageUnits(const AnalyzedProject& project, const torch::nn::Sequential& stage,
                       int first, int last)
    : stage_(stage) {
    const auto& layers = project.project.model.layers;
    const auto names = stage->named_children().keys();
    // Modules that are not a layer of the stage, waiting for the layer they
    // go with.
    std::size_t pending = 0;
    bool waiting = false;
    int layer = first;
    for (std::size_t m = 0; m < names.size(); ++m) {
        std::string expected;
        if (layer <= last) {
            expected = layers[static_cast<std::size_t>(layer)].name;
            std::replace(expected.begin(), expected.end(), '.', '_');
        }
        if (names[m] != expected) {
            if (!waiting) {
                pending = m;
                waiting = true;
            }
            continue;
        }
        if (layer == first || begins_recomputation_unit(layers, layer)) {
            starts_.push_back(waiting ? pending : m);
        }
        waiting = false;
        ++layer;
    }
    if (starts_.empty() || starts_.front() != 0) {
        starts_.insert(starts_.begin(), 0);
    }
    starts_.push_back(names.size());
}

torch::Tensor StageUnits::forward(std::size_t u, torch::Tensor x) {
    for (std::size_t m = starts_.at(u); m < starts_.at(u + 1); ++m) {
        x = (stage_->begin() + static_cast<std::ptrdiff_t>(m))->forward(std::move(x));
    }
    return x;
}

}  // namespace pipewright::backend
