#include "pipewright/sim/profile_coverage.h"

#include <unordered_set>

#include "pipewright/core/printable_name.h"

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

}  // namespace

ProfileCoverage profile_coverage(const Profile& profile, const Model& model) {
    ProfileCoverage c;
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
    return out;
}

}  // namespace pipewright
