#pragma once

// What the catalog's analysers share: hyper-parameter definitions and
// values, where problems go, and the per-sample cost of a layer or of one
// part of a block (core/src/model/layer_catalog.cpp has the conventions).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/tensor.h"

namespace pipewright::catalog {

inline constexpr double kMaxInteger = 2147483647.0;      // largest accepted integer hyper-parameter
inline constexpr double kMaxExact = 9007199254740992.0;  // 2^53: counts stay exact in a double
inline const char* const kPrevious = "the previous layer produces ";

struct ParamDef {
    ParamSpec spec;
    double min = 1;            // smallest accepted value (integers and numbers)
    double max = kMaxInteger;  // largest accepted value
    bool max_open = false;     // max itself is excluded
};

inline ParamDef param(std::string name, ParamKind kind, bool required, double def, std::string desc,
                      double min = 1, std::string zero_means = {}) {
    const bool fraction = kind == ParamKind::number;  // the only number is a probability
    return {{std::move(name), kind, required, def, std::move(desc), {}, std::move(zero_means)},
            min,
            fraction ? 1 : kMaxInteger,
            fraction};
}
inline ParamDef req_int(std::string name, std::string desc) {
    return param(std::move(name), ParamKind::integer, true, 0, std::move(desc));
}
inline ParamDef opt_int(std::string name, double def, std::string desc, double min = 1,
                        std::string zero_means = {}) {
    return param(std::move(name), ParamKind::integer, false, def, std::move(desc), min,
                 std::move(zero_means));
}
inline ParamDef opt_bool(std::string name, bool def, std::string desc) {
    return param(std::move(name), ParamKind::boolean, false, def ? 1 : 0, std::move(desc));
}
// One of `choices`, the first being the default.
inline ParamDef opt_choice(std::string name, std::vector<std::string> choices, std::string desc) {
    ParamDef d = param(std::move(name), ParamKind::choice, false, 0, std::move(desc));
    d.spec.choices = std::move(choices);
    return d;
}

// Hyper-parameter values after validation, defaults applied.
struct Params {
    std::map<std::string, double, std::less<>> values;
    std::set<std::string, std::less<>> given;

    [[nodiscard]] double get(std::string_view name) const {
        auto it = values.find(name);
        return it == values.end() ? 0.0 : it->second;
    }
    [[nodiscard]] bool flag(std::string_view name) const { return get(name) != 0.0; }
};

// Where problems go while one layer is analysed.
struct Ctx {
    Diagnostics& diagnostics;
    const std::string& path;
    std::string_view type;

    void input_error(const std::string& message) const { diagnostics.add(path, message); }
    void param_error(std::string_view param, const std::string& message) const {
        diagnostics.add(path + "." + std::string(param), message);
    }
};

// Per-sample costs of one layer or one part of a block.
struct Cost {
    double params = 0, fwd = 0, bwd_input = 0, bwd_weight = 0, stash = 0, weight_stash = 0;
    double recomputable = 0;  // of `stash`, what selective recomputation frees
    // Of `params`, those a token does not use: a mixture of experts' routed
    // experts it is not sent to.
    double inactive_params = 0;

    Cost& operator+=(const Cost& o) {
        params += o.params;
        fwd += o.fwd;
        bwd_input += o.bwd_input;
        bwd_weight += o.bwd_weight;
        stash += o.stash;
        weight_stash += o.weight_stash;
        recomputable += o.recomputable;
        inactive_params += o.inactive_params;
        return *this;
    }
};

// batchnorm / layernorm: a scale and a shift per feature.
inline Cost norm_cost(double numel, double features) {
    return {2 * features, 8 * numel, 8 * numel, 2 * numel, numel, numel};
}

// relu, gelu, dropout: `flops` per element each way, keeps its input or mask.
inline Cost elementwise_cost(double numel, double flops) {
    return {0, flops * numel, flops * numel, 0, numel, 0};
}

// `tokens` rows of `in` features times an [in, out] weight.
inline Cost matmul_cost(double tokens, double in, double out, bool bias) {
    const double mm = 2 * tokens * in * out;
    const double bias_flops = bias ? tokens * out : 0;
    return {in * out + (bias ? out : 0),
            mm + bias_flops,
            mm,
            mm + bias_flops,
            tokens * in,
            tokens * in};
}

inline double dnumel(const Shape& s) {
    double n = 1;
    for (auto d : s) {
        n *= static_cast<double>(d);
    }
    return n;
}

inline std::int64_t as_int(double v) {
    return static_cast<std::int64_t>(v);
}

inline bool expect_last_dim(const Ctx& ctx, const Shape& in, std::string_view param, double value) {
    if (static_cast<double>(in.back()) != value) {
        ctx.input_error(std::string(ctx.type) + " expects an input whose last dimension is " +
                        std::string(param) + " = " + std::to_string(as_int(value)) + ", but " +
                        kPrevious + to_string(in));
        return false;
    }
    return true;
}

struct Result {
    Cost cost;
    Shape shape;
    std::optional<DType> dtype;  // unset: same as the input
};
using Analyzer = std::optional<Result> (*)(const Params&, const Shape&, const Ctx&);

// The convolutional layers' analysers (model/vision_layers.cpp): images of
// [channels, height, width], as ResNet-50 runs them.
std::optional<Result> analyze_conv2d(const Params& p, const Shape& in, const Ctx& ctx);
std::optional<Result> analyze_batchnorm2d(const Params& p, const Shape& in, const Ctx& ctx);
std::optional<Result> analyze_maxpool2d(const Params& p, const Shape& in, const Ctx& ctx);
std::optional<Result> analyze_adaptive_avgpool2d(const Params& p, const Shape& in, const Ctx& ctx);
std::optional<Result> analyze_bottleneck(const Params& p, const Shape& in, const Ctx& ctx);

// The transformer block's hyper-parameters and its analyser
// (model/transformer_block.cpp).
std::vector<ParamDef> transformer_block_params();
std::optional<Result> analyze_transformer(const Params& p, const Shape& in, const Ctx& ctx);

}  // namespace pipewright::catalog
