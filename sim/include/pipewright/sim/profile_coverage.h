#pragma once

// Which of a model's costs a measured profile supplies. A profile of another
// model matches no layer by name, yet its transfer fit would still replace
// every link: the user must hear about it, and every summary says where its
// figures came from.

#include <optional>
#include <string>
#include <vector>

#include "pipewright/core/model.h"
#include "pipewright/core/profile.h"

namespace pipewright {
struct AnalyzedProject;
}

namespace pipewright {

struct ProfileCoverage {
    std::vector<std::string> measured;    // model layers priced from the profile
    std::vector<std::string> overridden;  // model layers with a cost in the project (it wins)
    std::vector<std::string> estimated;   // model layers the profile lacks: analytic estimate
    std::vector<std::string> foreign;     // profile layers the model does not have
    // Measured layers whose recorded sizes are not the model's: "fc0 (1,056
    // parameters when profiled, 8,448 now)". Their times are still used.
    std::vector<std::string> resized;
    bool transfer = false;     // the profile's transfer fit prices every link
    bool collectives = false;  // its collective fits price data parallelism's
    std::size_t model_layers = 0;

    [[nodiscard]] bool matches_none() const { return measured.empty() && overridden.empty(); }
    [[nodiscard]] bool partial() const {
        return !estimated.empty() || !foreign.empty() || !resized.empty();
    }
};

[[nodiscard]] ProfileCoverage profile_coverage(const Profile& profile, const Model& model);

// "3 of 5 layers and the transfers from the profile; analytic estimate for
// conv1, fc" (names escaped, lists shortened).
[[nodiscard]] std::string describe_cost_sources(const ProfileCoverage& coverage);

// One warning per problem ("the profile matches none of the model's 5 layers
// ..."), empty when the profile fits the model.
[[nodiscard]] std::vector<std::string> profile_warnings(const ProfileCoverage& coverage);

// A warning when the profile's layer times at `microbatch_size` samples are
// guessed rather than measured: below the smallest size measured (a small
// micro-batch runs less efficiently than scaling down assumes) or past twice
// the largest. `command` is what to run to measure it ("pipewright profile
// p.json"); empty: the warning only says which sizes to measure.
[[nodiscard]] std::optional<std::string> profile_size_warning(const Profile& profile,
                                                              int microbatch_size,
                                                              const std::string& command = "");

// How much longer a CPU rank computes in a run of `ranks` workers on one
// machine (of the profile's Torch threads each) than the profile timed it:
// when they need more threads than the machine has cores, they take turns on
// them. As if every rank computed at every moment: ranks × threads ÷ cores,
// over the share the profile's own concurrent ranks already took turns for.
// 1 when they fit, for GPUs, and for a profile that does not record its
// machine.
[[nodiscard]] double profile_core_sharing(const Profile& profile, int ranks);
// The same for a project's run: the most ranks it puts on one machine.
[[nodiscard]] double profile_core_sharing(const Profile& profile, const AnalyzedProject& project);

// Such a layout, said in words: the simulation stretches the ranks' compute
// by profile_core_sharing as if they all computed at once, but not the waits
// the turns add to their exchanges, so a run is slower still.
// nullopt when the ranks fit the cores, or the profile is not of CPUs or
// does not record its machine.
[[nodiscard]] std::optional<std::string> profile_oversubscription_warning(const Profile& profile,
                                                                          int ranks);

}  // namespace pipewright
