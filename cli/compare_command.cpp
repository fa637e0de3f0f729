// Puts a simulated and a measured timeline side by side: iteration time, busy
// time per device and the median duration of each kind of action, with the
// simulation's error relative to the measurement.
#include "compare_command.h"

#include <algorithm>
#include <filesystem>

#include "commands.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/timeline.h"
#include "pipewright/core/timeline_metrics.h"
#include "report_format.h"

namespace pipewright::cli {
namespace {

// A run folder stands for the timeline.json inside it.
std::filesystem::path timeline_path(const std::string& arg) {
    const std::filesystem::path p(arg);
    return std::filesystem::is_directory(p) ? p / "timeline.json" : p;
}

struct Row {
    std::string what;
    double simulated = 0;
    double measured = 0;
    [[nodiscard]] double error() const {
        return measured > 0 ? (simulated - measured) / measured : 0;
    }
};

// The measured lane of each simulated lane, matched by device. A
// data-parallel run measures every replica's ranks while its simulation
// draws replica 0's lanes only (replicas alike are simulated once), so the
// measured timeline may have more lanes; the others are left out. Empty
// with a message in `problem` when a simulated device has no measured lane.
// With `force`, lanes as many as the simulation's are matched in order
// whatever their devices.
std::vector<int> match_lanes(const Timeline& sim, const Timeline& real, bool force,
                             std::string& problem) {
    std::vector<int> lanes;
    if (sim.num_ranks() == real.num_ranks() && (force || sim.devices == real.devices)) {
        for (int r = 0; r < sim.num_ranks(); ++r) {
            lanes.push_back(r);
        }
        return lanes;
    }
    if (sim.num_ranks() > real.num_ranks()) {
        problem = "the simulated timeline has " + std::to_string(sim.num_ranks()) +
                  " devices and the measured one " + std::to_string(real.num_ranks()) +
                  "; compare runs of the same placement";
        return {};
    }
    for (const auto& device : sim.devices) {
        const auto it = std::find(real.devices.begin(), real.devices.end(), device);
        if (it == real.devices.end()) {
            problem = "the simulated timeline's device " + printable_name(device) +
                      " has no lane in the measured one (" + std::to_string(real.num_ranks()) +
                      " devices, the first " + printable_name(real.devices.front()) +
                      "); compare a simulation and a run of the same placement, or pass "
                      "--force to compare lane by lane";
            return {};
        }
        lanes.push_back(static_cast<int>(it - real.devices.begin()));
    }
    return lanes;
}

// The measured timeline reduced to `lanes` (renumbered in that order).
Timeline only_lanes(const Timeline& t, const std::vector<int>& lanes) {
    Timeline out = t;
    out.devices.clear();
    out.events.clear();
    out.memory.clear();
    std::vector<int> lane_of(t.devices.size(), -1);
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        lane_of[static_cast<std::size_t>(lanes[i])] = static_cast<int>(i);
        out.devices.push_back(t.devices[static_cast<std::size_t>(lanes[i])]);
        if (!t.memory.empty()) {
            out.memory.push_back(t.memory[static_cast<std::size_t>(lanes[i])]);
        }
    }
    for (TimelineEvent e : t.events) {
        const int lane = lane_of[static_cast<std::size_t>(e.rank)];
        if (lane < 0) {
            continue;
        }
        e.rank = lane;
        e.peer_rank = e.peer_rank >= 0 ? lane_of[static_cast<std::size_t>(e.peer_rank)] : -1;
        out.events.push_back(e);
    }
    return out;
}

}  // namespace

void add_compare_command(CLI::App& app, CompareArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "compare", "Compare a simulated and a measured timeline (files or run folders)");
    cmd->add_option("simulated", a.simulated, "Timeline from `simulate --timeline`")->required();
    cmd->add_option("measured", a.measured, "Timeline or folder from `pipewright run`")->required();
    cmd->add_flag("--json", a.json, "Print the comparison as one JSON object");
    cmd->add_flag("--force", a.force,
                  "Compare lane by lane even when the timelines' devices or schedules differ");
}

int run_compare(const CompareArgs& a, std::ostream& out, std::ostream& err) {
    Timeline sim, real;
    for (auto [arg, t] : {std::pair{&a.simulated, &sim}, std::pair{&a.measured, &real}}) {
        try {
            *t = load_timeline_file(timeline_path(*arg));
        } catch (const InputError& e) {
            print_problems(err, *arg, e.diagnostics());
            return kInvalidInput;
        } catch (const std::exception& e) {
            err << "pipewright: " << printable_name(*arg) << ": " << printable_name(e.what())
                << '\n';
            return kInvalidInput;
        }
    }
    if (!a.force && !sim.schedule.empty() && !real.schedule.empty() &&
        sim.schedule != real.schedule) {
        err << "pipewright: the simulated timeline runs " << printable_name(sim.schedule)
            << " and the measured one " << printable_name(real.schedule)
            << ": their actions do not correspond; simulate with --schedule "
            << printable_name(real.schedule) << ", or pass --force to compare them anyway\n";
        return kInvalidInput;
    }
    std::string problem;
    const std::vector<int> lanes = match_lanes(sim, real, a.force, problem);
    if (lanes.empty() && !problem.empty()) {
        err << "pipewright: " << problem << '\n';
        return kInvalidInput;
    }
    // The iteration is the whole run's (every replica's lanes); the rows per
    // device and per kind of action cover the lanes the simulation has.
    const Timeline compared = only_lanes(real, lanes);
    const TimelineMetrics ms = timeline_metrics(sim), mr = timeline_metrics(compared);
    std::vector<Row> rows{
        {"iteration time", ms.iteration_time_s, timeline_metrics(real).iteration_time_s}};
    for (std::size_t r = 0; r < ms.devices.size() && r < mr.devices.size(); ++r) {
        rows.push_back({"busy, rank " + std::to_string(lanes[r]) + " (" +
                            printable_name(compared.devices[r]) + ")",
                        ms.devices[r].busy_s, mr.devices[r].busy_s});
    }
    const bool subset = real.num_ranks() > sim.num_ranks();
    const std::string lanes_note =
        subset ? "the simulation has " + std::to_string(sim.num_ranks()) +
                     (sim.num_ranks() == 1 ? " lane" : " lanes") +
                     " (replica 0: replicas alike are simulated once); compared with the "
                     "measured lanes on the same devices, leaving out the measured timeline's " +
                     std::to_string(real.num_ranks() - sim.num_ranks()) + " other lane" +
                     (real.num_ranks() - sim.num_ranks() == 1 ? "" : "s") +
                     " (the other replicas' ranks) except in the iteration time"
               : "";
    const auto ks = action_kind_medians(sim), kr = action_kind_medians(compared);
    for (const auto& [kind, value] : kr) {
        if (ks.contains(kind)) {
            rows.push_back({"median " + std::string(to_string(kind)), ks.at(kind), value});
        }
    }
    if (a.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& r : rows) {
            list.push_back({{"what", r.what},
                            {"simulated_s", r.simulated},
                            {"measured_s", r.measured},
                            {"error_percent", 100 * r.error()}});
        }
        nlohmann::json j{{"simulated", a.simulated},
                         {"measured", a.measured},
                         {"schedule", real.schedule},
                         {"measured_lanes", lanes},
                         {"rows", list}};
        if (subset) {
            j["note"] = lanes_note;
        }
        out << j.dump(2) << '\n';
        return kOk;
    }
    out << "Simulated " << printable_name(a.simulated) << " (" << printable_name(sim.source) << ", "
        << printable_name(sim.schedule) << ") vs measured " << printable_name(a.measured) << " ("
        << printable_name(real.source) << ", " << printable_name(real.schedule) << ")\n\n";
    TextTable table({"", "simulated", "measured", "error"});
    for (const auto& r : rows) {
        const double e = r.error();
        table.add_row({r.what, format_duration(r.simulated), format_duration(r.measured),
                       (e >= 0 ? "+" : "-") + format_percent(std::abs(e))});
    }
    table.right_align(1);
    table.right_align(2);
    table.right_align(3);
    table.print(out, "  ");
    out << "\nerror = (simulated - measured) / measured\n";
    if (subset) {
        out << "Lanes: " << lanes_note << ".\n";
    }
    return kOk;
}

}  // namespace pipewright::cli
