#include "pipewright/core/training.h"

#include <algorithm>

namespace pipewright {

std::string_view to_string(OptimizerKind k) {
    switch (k) {
        case OptimizerKind::sgd:
            return "sgd";
        case OptimizerKind::adam:
            return "adam";
        case OptimizerKind::adamw:
            return "adamw";
    }
    return "sgd";
}

std::optional<OptimizerKind> parse_optimizer(std::string_view s) {
    if (s == "sgd") {
        return OptimizerKind::sgd;
    }
    if (s == "adam") {
        return OptimizerKind::adam;
    }
    if (s == "adamw") {
        return OptimizerKind::adamw;
    }
    return std::nullopt;
}

int OptimizerConfig::state_bytes_per_param() const {
    switch (type) {
        case OptimizerKind::sgd:
            return momentum != 0 ? 4 : 0;  // one fp32 momentum buffer
        case OptimizerKind::adam:
        case OptimizerKind::adamw:
            return 8;  // fp32 first and second moments
    }
    return 0;
}

std::string_view Training::precision_name() const {
    return float8 ? "float8" : to_string(dtype);
}

int Training::resolved_microbatches() const {
    if (microbatches) {
        return *microbatches;
    }
    if (microbatch_size && *microbatch_size > 0) {
        return batch_size / *microbatch_size;
    }
    return 1;
}

std::string_view to_string(Recompute r) {
    switch (r) {
        case Recompute::none:
            return "none";
        case Recompute::selective:
            return "selective";
        case Recompute::full:
            return "full";
    }
    return "none";
}

std::string_view to_string(GradientAccumulation g) {
    return g == GradientAccumulation::add ? "add" : "fused";
}

int default_microbatches(int batch, int stages) {
    for (int m = std::min(batch, 2 * stages); m > 1; --m) {
        if (batch % m == 0 && m >= stages) {
            return m;
        }
    }
    return 1;
}

}  // namespace pipewright
