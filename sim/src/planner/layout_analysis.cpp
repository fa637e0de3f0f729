// Each candidate layout resolved on device indices, as analyze_project
// resolves it (core/src/parallel/analysis.cpp and core/src/parallel/data_parallel.cpp), on a
// topology analysed once. Where analyze_project would report a problem, or
// the layout is not one the planner builds, it is handed to analyze_project
// itself, so that its reason is word for word the same.

#include "planner/layout_analysis.h"

#include <algorithm>
#include <unordered_set>

#include "pipewright/core/core_sharing.h"
#include "pipewright/core/schedule_generators.h"
#include "planner/internal.h"

namespace pipewright::planner {

namespace {

std::size_t at(int i) {
    return static_cast<std::size_t>(i);
}

// analyze_project's limit on stage × micro-batch pairs (resolve_batch).
constexpr long long kMaxPairs = 10'000'000;

}  // namespace

LayoutAnalyzer::LayoutAnalyzer(const Project& project, const PlanOptions& options)
    : analysis_(analysis_options(options)), index_(project.topology) {
    ++full_analyses_;
    const DeviceCatalog& catalog =
        options.catalog != nullptr ? *options.catalog : DeviceCatalog::builtin();
    const std::vector<DeviceLocation>& devices = index_.devices();
    nodes_ = project.topology.nodes.size();
    for (const Node& node : project.topology.nodes) {
        for (const Container& container : node.containers) {
            largest_container_ = std::max(largest_container_, container.devices.size());
        }
    }
    if (devices.empty() || project.model.layers.empty()) {
        return;
    }
    // The layers (and every device and link override) checked on a
    // placement that is valid whatever the project's says.
    Project single = project;
    single.data_parallel = DataParallel{};
    single.tensor_parallel = TensorParallel{};
    StageAssignment all{devices.front().path, {}};
    for (const LayerSpec& layer : project.model.layers) {
        all.layers.push_back(layer.name);
    }
    single.placement = {all};
    AnalysisOptions naive = analysis_;
    naive.schedule = "naive";
    Diagnostics diagnostics;
    auto analyzed = analyze_project(single, naive, diagnostics);
    if (!analyzed) {
        return;
    }
    base_.layers = std::move(analyzed->layers);
    base_.tied = std::move(analyzed->tied);
    specs_.reserve(devices.size());
    for (const DeviceLocation& device : devices) {
        specs_.push_back(effective_device(project.topology, device, catalog).spec);
    }
    usable_ = true;
}

std::optional<AnalyzedProject> LayoutAnalyzer::analyze(const Project& layout, std::string& reason) {
    if (auto resolved = resolve(layout)) {
        return resolved;
    }
    ++full_analyses_;
    Diagnostics diagnostics;
    auto analyzed = analyze_project(layout, analysis_, diagnostics);
    if (!analyzed) {
        reason = diagnostics.items().empty() ? "cannot be analysed"
                                             : diagnostics.items().front().message;
    }
    return analyzed;
}

int LayoutAnalyzer::index_of(const DeviceLocation& device) const {
    return index_.find(device.path);
}

std::optional<AnalyzedProject> LayoutAnalyzer::resolve(const Project& layout) {
    const Training& training = layout.training;
    if (!usable_ || training.schedule.from_csv() ||
        layout.model.layers.size() != base_.layers.size() ||
        layout.topology.nodes.size() != nodes_) {
        return std::nullopt;
    }
    const ScheduleInfo* info = find_schedule(training.schedule.name);
    if (info == nullptr) {
        return std::nullopt;
    }
    AnalyzedProject out;
    out.project = layout;
    out.layers = base_.layers;
    out.tied = base_.tied;
    if (!resolve_stages(layout, out) || !resolve_replicas(layout, out) ||
        !resolve_tensor_groups(layout, out) || !resolve_batch(layout, info->microbatching, out)) {
        return std::nullopt;
    }
    // As analyze_project: CPU ranks that outnumber a calibration's cores.
    share_calibrated_cores(out);
    try {
        out.schedule = with_project_communication(
            out, generate_schedule(training.schedule.name, out.stage_ranks(), out.microbatches));
    } catch (const ScheduleError&) {
        return std::nullopt;  // analyze_project words the problem
    }
    return out;
}

// Every stage on a device of the topology, the stages covering the model's
// layers once each, in order (check_placement_order).
bool LayoutAnalyzer::resolve_stages(const Project& layout, AnalyzedProject& out) const {
    std::unordered_map<int, int> rank_of;  // device index -> rank
    std::size_t next = 0;                  // the layer the next stage starts at
    const auto& layers = layout.model.layers;
    for (std::size_t i = 0; i < layout.placement.size(); ++i) {
        const StageAssignment& stage = layout.placement[i];
        const int found = index_.find(stage.device);
        if (found < 0 || stage.layers.empty()) {
            return false;
        }
        const std::size_t first = next;
        for (const std::string& name : stage.layers) {
            if (next >= layers.size() || layers[next].name != name) {
                return false;
            }
            ++next;
        }
        const auto [it, added] = rank_of.try_emplace(found, static_cast<int>(out.ranks.size()));
        if (added) {
            out.ranks.push_back(index_.devices()[at(found)]);
            out.rank_specs.push_back(specs_[at(found)]);
        }
        out.stages.push_back(
            {static_cast<int>(i), it->second, static_cast<int>(first), static_cast<int>(next) - 1});
    }
    return !out.stages.empty() && next == layers.size();
}

// The replicas' devices: listed, or shifted by the pipeline's span
// (default_replicas), each device used once.
bool LayoutAnalyzer::resolve_replicas(const Project& layout, AnalyzedProject& out) const {
    const DataParallel& dp = layout.data_parallel;
    const int group = std::max(1, layout.tensor_parallel.size);
    if (dp.size < 1) {
        return false;
    }
    out.replicas = {out.ranks};
    out.replica_specs = {out.rank_specs};
    if (dp.size == 1) {
        return true;
    }
    std::vector<int> zero;
    for (const DeviceLocation& device : out.ranks) {
        zero.push_back(index_of(device));
    }
    const auto [lo, hi] = std::minmax_element(zero.begin(), zero.end());
    const int span = *hi - *lo + group;
    if (dp.replicas.empty() &&
        static_cast<long long>(*lo) + static_cast<long long>(span) * dp.size >
            static_cast<long long>(index_.devices().size())) {
        return false;
    }
    if (!dp.replicas.empty() && dp.replicas.size() + 1 != at(dp.size)) {
        return false;
    }
    std::unordered_set<int> used(zero.begin(), zero.end());
    for (int r = 1; r < dp.size; ++r) {
        std::vector<DeviceLocation> replica;
        std::vector<DeviceSpec> specs;
        for (std::size_t k = 0; k < zero.size(); ++k) {
            int device = zero[k] + r * span;
            if (!dp.replicas.empty()) {
                const auto& names = dp.replicas[at(r - 1)];
                device = names.size() == zero.size() ? index_.find(names[k]) : -1;
                if (device < 0 || !used.insert(device).second) {
                    return false;
                }
            }
            replica.push_back(index_.devices()[at(device)]);
            specs.push_back(specs_[at(device)]);
        }
        out.replicas.push_back(std::move(replica));
        out.replica_specs.push_back(std::move(specs));
    }
    return true;
}

// Each rank's group: its device and the size - 1 after it in its container,
// no device in two groups (resolve_tensor_parallel).
bool LayoutAnalyzer::resolve_tensor_groups(const Project& layout, AnalyzedProject& out) {
    const TensorParallel& tp = layout.tensor_parallel;
    if (tp.size < 1 || tp.size > kMaxTensorParallel ||
        at(tp.size) > std::max<std::size_t>(largest_container_, 1)) {
        return false;
    }
    if (tp.size == 1) {
        return true;
    }
    auto& shares = shares_[{tp.size, tp.sequence_parallel}];
    if (!shares.has_value()) {
        Diagnostics problems;
        auto computed = tensor_shares(layout.model, base_.layers, tp, problems);
        shares = problems.empty() ? std::optional(std::move(computed))
                                  : std::optional(std::vector<TensorShare>{});
    }
    if (shares->empty()) {
        return false;
    }
    out.tensor_shares = *shares;
    const long long needed = static_cast<long long>(out.ranks.size()) *
                             static_cast<long long>(out.replicas.size()) * tp.size;
    const std::vector<DeviceLocation>& devices = index_.devices();
    if (needed > static_cast<long long>(devices.size())) {
        return false;
    }
    std::unordered_set<int> used;
    for (const auto& replica : out.replicas) {
        std::vector<std::vector<DeviceLocation>> groups;
        for (const DeviceLocation& leader : replica) {
            const int first = index_of(leader);
            std::vector<DeviceLocation> group;
            for (int k = first; at(k) < devices.size() && group.size() < at(tp.size); ++k) {
                const DeviceLocation& device = devices[at(k)];
                if (device.node != leader.node || device.container != leader.container ||
                    !used.insert(k).second) {
                    return false;
                }
                group.push_back(device);
            }
            if (group.size() < at(tp.size)) {
                return false;
            }
            groups.push_back(std::move(group));
        }
        out.tensor_groups.push_back(std::move(groups));
    }
    return true;
}

// Each replica's share of the batch in equal micro-batches (resolve_batch).
bool LayoutAnalyzer::resolve_batch(const Project& layout, bool microbatching,
                                   AnalyzedProject& out) const {
    const Training& t = layout.training;
    const int global = t.batch_size;
    const int context = std::max(1, layout.context_parallel.size);
    if (std::max(1, layout.data_parallel.size) % context != 0) {
        return false;
    }
    const int replicas = batch_shares(layout.data_parallel.size, context);
    if (global < 1 || global % replicas != 0) {
        return false;
    }
    const int batch = global / replicas;
    int m = t.resolved_microbatches();
    if (!t.microbatches && t.microbatch_size) {
        if (*t.microbatch_size < 1 || batch % *t.microbatch_size != 0) {
            return false;
        }
        m = batch / *t.microbatch_size;
    }
    if (!microbatching) {
        m = 1;
    }
    if (m < 1 || m > batch || batch % m != 0 ||
        static_cast<long long>(m) * static_cast<long long>(layout.placement.size()) > kMaxPairs) {
        return false;
    }
    out.microbatches = m;
    out.microbatch_size = batch / m;
    return true;
}

void simulate_outcome(PlanOutcome& outcome, const Project& layout, LayoutAnalyzer& analyzer,
                      const CostModelOptions& costs) {
    if (auto analyzed = analyzer.analyze(layout, outcome.reason)) {
        simulate_analyzed(outcome, *analyzed, costs);
    }
}

}  // namespace pipewright::planner
