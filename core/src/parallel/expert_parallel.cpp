#include "pipewright/core/expert_parallel.h"

#include <cstdint>

#include "pipewright/core/printable_name.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright {

void check_expert_parallel(const Model& model, int size, int data_parallel,
                           const std::string& size_path, Diagnostics& d) {
    if (size < 1 || size > kMaxExpertParallel) {
        d.add(size_path, "must be from 1 to " + std::to_string(kMaxExpertParallel));
        return;
    }
    if (size == 1) {
        return;
    }
    const std::string e = std::to_string(size);
    bool any = false;
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
        const LayerSpec& layer = model.layers[i];
        if (layer.type != "transformer_block") {
            continue;
        }
        const TransformerDims dims = transformer_dims(layer);
        if (!dims.moe()) {
            continue;
        }
        any = true;
        const auto experts = static_cast<std::int64_t>(dims.experts);
        if (experts % size != 0) {
            d.add("model.layers[" + std::to_string(i) + "].experts",
                  "the " + std::to_string(experts) + " experts of " + printable_name(layer.name) +
                      " do not split evenly over " + size_path + " " + e +
                      " ranks; use an expert-parallel size that divides them");
            return;
        }
    }
    if (!any) {
        d.add(size_path, e + " splits the routed experts of mixture-of-experts blocks, but the "
                             "model has none (a transformer_block with experts); use 1");
        return;
    }
    if (data_parallel % size != 0) {
        d.add(size_path,
              e + " must divide the " + std::to_string(data_parallel) +
                  " data-parallel replicas: the experts are split over that many replicas of "
                  "each stage, as in Megatron-LM; use a data-parallel size that is a multiple "
                  "of " +
                  e + " (--data-parallel), or a smaller expert-parallel size");
    }
}

}  // namespace pipewright
