#pragma once

// The whole project's topology analysed once per plan, and each candidate
// layout resolved on its device indices (planner/layout_analysis.cpp).
//
// analyze_project reads every device of the topology (its path into a map,
// its effective figures) for each project it analyses: at 100,000 devices
// that, repeated for every layout and ZeRO stage the 3D search judges, was
// nearly all of the search's time. The analyser does that work once and
// gives each layout the same AnalyzedProject that analyze_project would.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/planner.h"
#include "planner/topology_index.h"

namespace pipewright::planner {

class LayoutAnalyzer {
  public:
    // Analyses `project`'s topology and layers (the one analysis of the
    // whole topology in a plan).
    LayoutAnalyzer(const Project& project, const PlanOptions& options);
    LayoutAnalyzer(const LayoutAnalyzer&) = delete;
    LayoutAnalyzer& operator=(const LayoutAnalyzer&) = delete;

    // What analyze_project gives `layout`, a layout of the project the
    // analyser was made for (its model and topology, replicas and groups
    // anywhere). A layout the planner does not build (a CSV schedule, a
    // placement or replica list that is not sound) goes to analyze_project
    // itself, counted in full_analyses(); nullopt, with the reason its first
    // problem gives, when it cannot be analysed.
    [[nodiscard]] std::optional<AnalyzedProject> analyze(const Project& layout,
                                                         std::string& reason);

    [[nodiscard]] const TopologyIndex& topology() const { return index_; }

    // Analyses of the whole topology: this analyser's own and every layout
    // handed to analyze_project.
    [[nodiscard]] int full_analyses() const { return full_analyses_; }

  private:
    // nullopt where only analyze_project can say (a problem, or an unusual layout).
    [[nodiscard]] std::optional<AnalyzedProject> resolve(const Project& layout);
    [[nodiscard]] bool resolve_stages(const Project& layout, AnalyzedProject& out) const;
    [[nodiscard]] bool resolve_replicas(const Project& layout, AnalyzedProject& out) const;
    [[nodiscard]] bool resolve_tensor_groups(const Project& layout, AnalyzedProject& out);
    [[nodiscard]] bool resolve_batch(const Project& layout, bool microbatching,
                                     AnalyzedProject& out) const;
    [[nodiscard]] int index_of(const DeviceLocation& device) const;

    AnalysisOptions analysis_;
    bool usable_ = false;  // the topology and the model analyse without a problem
    int full_analyses_ = 0;
    TopologyIndex index_;
    std::vector<DeviceSpec> specs_;  // effective, per device
    std::size_t nodes_ = 0;
    std::size_t largest_container_ = 0;
    AnalyzedProject base_;  // the layers and tied embeddings of the model
    // Tensor shares per (size, sequence parallelism); empty where the model
    // cannot split so.
    std::map<std::pair<int, bool>, std::optional<std::vector<TensorShare>>> shares_;
};

// simulate_outcome (planner/internal.h) for a layout of the analyser's
// project: what `pipewright simulate` gives it, without reading the
// topology again.
void simulate_outcome(PlanOutcome& outcome, const Project& layout, LayoutAnalyzer& analyzer,
                      const CostModelOptions& costs);

}  // namespace pipewright::planner
