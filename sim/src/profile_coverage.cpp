#include "pipewright/sim/profile_coverage.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "pipewright/core/core_sharing.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/launch_files.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"

namespace pipewright {

namespace {

// "a, b, c and 7 more": a profile of another model may list hundreds.
std::string name_list(const std::vector<std::string>& names) {
    constexpr std::size_t kShown = 5;
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < kShown; ++i) {
        out += (i == 0 ? "" : ", ") + printable_name(names[i]);
    }
    if (names.size() > kShown) {
        out += " and " + std::to_string(names.size() - kShown) + " more";
    }
    return out;
}

std::string layers(std::size_t n) {
    return std::to_string(n) + " layer" + (n == 1 ? "" : "s");
}

// "fc0 (1,056 parameters when profiled, 8,448 now)" when the profile
// recorded sizes that the model's layer does not have, else "".
std::string resize_of(const LayerProfile& measured, const LayerSpec& layer,
                      const std::optional<LayerAnalysis>& now) {
    if (!now) {
        return "";
    }
    std::string what;
    if (measured.parameters && *measured.parameters != now->parameters) {
        what = format_count(static_cast<double>(*measured.parameters)) +
               " parameters when profiled, " + format_count(static_cast<double>(now->parameters)) +
               " now";
    } else if (measured.output_shape && *measured.output_shape != now->output_shape) {
        what = "output " + to_string(*measured.output_shape) + " when profiled, " +
               to_string(now->output_shape) + " now";
    }
    return what.empty() ? "" : printable_name(layer.name) + " (" + what + ")";
}

}  // namespace

ProfileCoverage profile_coverage(const Profile& profile, const Model& model) {
    ProfileCoverage c;
    // Each layer's sizes now, along the model's chain of shapes (a layer
    // that cannot be analysed is left unchecked: validation reports it).
    std::vector<std::optional<LayerAnalysis>> now;
    Shape shape = model.input.shape;
    DType dtype = model.input.dtype;
    for (const auto& layer : model.layers) {
        Diagnostics ignored;
        now.push_back(analyze_layer(layer, shape, dtype, ignored, ""));
        if (!now.back()) {
            break;
        }
        shape = now.back()->output_shape;
        dtype = now.back()->output_dtype;
    }
    now.resize(model.layers.size());
    c.transfer = profile.transfer.has_value();
    c.collectives = profile.all_reduce.has_value() || profile.all_gather.has_value();
    c.model_layers = model.layers.size();
    std::unordered_set<std::string> profiled;
    for (const auto& l : profile.layers) {
        profiled.insert(l.name);
    }
    std::unordered_set<std::string> in_model;
    for (const auto& layer : model.layers) {
        in_model.insert(layer.name);
        if (layer.cost) {
            c.overridden.push_back(layer.name);
        } else if (profiled.count(layer.name) != 0) {
            c.measured.push_back(layer.name);
            const auto i = static_cast<std::size_t>(&layer - model.layers.data());
            if (std::string resized = resize_of(*profile.find(layer.name), layer, now[i]);
                !resized.empty()) {
                c.resized.push_back(std::move(resized));
            }
        } else {
            c.estimated.push_back(layer.name);
        }
    }
    for (const auto& l : profile.layers) {
        if (in_model.count(l.name) == 0) {
            c.foreign.push_back(l.name);
        }
    }
    return c;
}

std::string describe_cost_sources(const ProfileCoverage& c) {
    std::string out = std::to_string(c.measured.size()) + " of " + layers(c.model_layers);
    out += c.transfer && c.collectives ? ", the transfers and the collectives from the profile"
           : c.transfer                ? " and the transfers from the profile"
                                       : " from the profile";
    if (!c.estimated.empty()) {
        out += "; analytic estimate for " + name_list(c.estimated);
    }
    if (!c.overridden.empty()) {
        out += "; the project's cost for " + name_list(c.overridden);
    }
    if (!c.transfer) {
        out += "; transfers from the topology's links";
    }
    return out;
}

std::vector<std::string> profile_warnings(const ProfileCoverage& c) {
    std::vector<std::string> out;
    if (c.measured.empty() && !c.estimated.empty()) {
        out.push_back("the profile measured none of the model's " + layers(c.model_layers) +
                      (c.foreign.empty() ? "" : " (it lists " + name_list(c.foreign) + ")") +
                      ": is it a profile of another model?" +
                      (c.transfer ? " Its transfer fit still replaces every link." : ""));
        return out;
    }
    if (!c.estimated.empty()) {
        out.push_back("the profile lacks " + layers(c.estimated.size()) + " of " +
                      std::to_string(c.model_layers) + " (" + name_list(c.estimated) +
                      "); they use the analytic estimate");
    }
    if (!c.foreign.empty()) {
        out.push_back("the profile measured " + layers(c.foreign.size()) +
                      " the model does not have (" + name_list(c.foreign) + ")");
    }
    if (!c.resized.empty()) {
        // Already escaped by resize_of.
        std::string list;
        for (std::size_t i = 0; i < c.resized.size() && i < 3; ++i) {
            list += (i == 0 ? "" : ", ") + c.resized[i];
        }
        if (c.resized.size() > 3) {
            list += " and " + std::to_string(c.resized.size() - 3) + " more";
        }
        out.push_back("the profile measured " + layers(c.resized.size()) +
                      " of the same name at other sizes: " + list +
                      "; their measured times do not describe this model: profile it again");
    }
    return out;
}

std::optional<std::string> profile_size_warning(const Profile& profile, int microbatch_size,
                                                const std::string& command) {
    std::vector<int> sizes = profile.measured_sizes();
    const bool below = microbatch_size < sizes.front();
    const bool far_above = microbatch_size > 2 * sizes.back();
    if (!below && !far_above) {
        return std::nullopt;
    }
    std::string measured;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        measured += (i == 0                  ? ""
                     : i + 1 == sizes.size() ? " and "
                                             : ", ") +
                    std::to_string(sizes[i]);
    }
    const bool one_sample = sizes.size() == 1 && sizes.front() == 1;
    sizes.push_back(microbatch_size);
    std::sort(sizes.begin(), sizes.end());
    std::string wanted;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        wanted += (i == 0 ? "" : ",") + std::to_string(sizes[i]);
    }
    const std::string n = std::to_string(microbatch_size);
    return "the profile measured micro-batches of " + measured +
           (one_sample ? " sample" : " samples") + ", and this layout runs " + n +
           ": its layer times are extrapolated " +
           (below ? "down, and a small micro-batch runs less efficiently than that assumes"
                  : "to more than twice the largest size measured") +
           "; measure " + n + " too (" +
           (command.empty() ? "profile --sizes " + wanted : command + " --sizes " + wanted) + ")";
}

double profile_core_sharing(const Profile& profile, int ranks) {
    if (profile.device_kind != "cpu") {
        return 1;
    }
    return core_sharing(profile.machine.cores, profile.machine.threads, ranks,
                        profile.machine.concurrent_ranks);
}

double profile_core_sharing(const Profile& profile, const AnalyzedProject& project) {
    // The whole run on one machine shares the most; count the ranks per
    // machine (a pass over every process) only when that shares at all.
    if (profile_core_sharing(profile, run_process_count(project)) <= 1) {
        return 1;
    }
    return profile_core_sharing(profile, launch_layout(project).ranks_per_node);
}

std::optional<std::string> profile_oversubscription_warning(const Profile& profile, int ranks) {
    if (profile.device_kind != "cpu") {
        return std::nullopt;
    }
    return core_sharing_warning("the profile", profile.machine.cores, profile.machine.threads,
                                ranks, profile.machine.concurrent_ranks);
}

}  // namespace pipewright
