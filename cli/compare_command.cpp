// Puts a simulated and a measured timeline side by side: iteration time, busy
// time per device and the median duration of each kind of action, with the
// simulation's error relative to the measurement.
#include "compare_command.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

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
    cmd->add_option("measured", a.measured,
                    "Timeline or folder from `pipewright run`; several runs of the same "
                    "project give each figure's run-to-run spread")
        ->required();
    cmd->add_flag("--json", a.json, "Print the comparison as one JSON object");
    cmd->add_flag("--force", a.force,
                  "Compare lane by lane even when the timelines' devices or schedules differ");
}

namespace {

// One measured run beside the simulation.
struct Measured {
    std::string path;
    Timeline timeline;
    std::vector<int> lanes;
    std::vector<Row> rows;
    std::string lanes_note;  // when the run has more lanes than the simulation
};

std::optional<Timeline> load(const std::string& arg, std::ostream& err) {
    try {
        return load_timeline_file(timeline_path(arg));
    } catch (const InputError& e) {
        print_problems(err, arg, e.diagnostics());
    } catch (const std::exception& e) {
        err << "pipewright: " << printable_name(arg) << ": " << printable_name(e.what()) << '\n';
    }
    return std::nullopt;
}

// The rows of `real` against `sim`; nullopt after saying why they do not
// correspond.
std::optional<Measured> measure(const Timeline& sim, const std::string& path, bool force,
                                std::ostream& err) {
    auto loaded = load(path, err);
    if (!loaded) {
        return std::nullopt;
    }
    Measured m{path, std::move(*loaded), {}, {}, {}};
    const Timeline& real = m.timeline;
    if (!force && !sim.schedule.empty() && !real.schedule.empty() &&
        sim.schedule != real.schedule) {
        err << "pipewright: " << printable_name(path) << ": the simulated timeline runs "
            << printable_name(sim.schedule) << " and the measured one "
            << printable_name(real.schedule)
            << ": their actions do not correspond; simulate with --schedule "
            << printable_name(real.schedule) << ", or pass --force to compare them anyway\n";
        return std::nullopt;
    }
    std::string problem;
    m.lanes = match_lanes(sim, real, force, problem);
    if (m.lanes.empty() && !problem.empty()) {
        err << "pipewright: " << printable_name(path) << ": " << problem << '\n';
        return std::nullopt;
    }
    // The iteration is the whole run's (every replica's lanes); the rows per
    // device and per kind of action cover the lanes the simulation has.
    const Timeline compared = only_lanes(real, m.lanes);
    const TimelineMetrics ms = timeline_metrics(sim), mr = timeline_metrics(compared);
    m.rows.push_back(
        {"iteration time", ms.iteration_time_s, timeline_metrics(real).iteration_time_s});
    for (std::size_t r = 0; r < ms.devices.size() && r < mr.devices.size(); ++r) {
        m.rows.push_back({"busy, rank " + std::to_string(m.lanes[r]) + " (" +
                              printable_name(compared.devices[r]) + ")",
                          ms.devices[r].busy_s, mr.devices[r].busy_s});
    }
    if (real.num_ranks() > sim.num_ranks()) {
        const int others = real.num_ranks() - sim.num_ranks();
        m.lanes_note = "the simulation has " + std::to_string(sim.num_ranks()) +
                       (sim.num_ranks() == 1 ? " lane" : " lanes") +
                       " (replica 0: replicas alike are simulated once); compared with the "
                       "measured lanes on the same devices, leaving out the measured "
                       "timeline's " +
                       std::to_string(others) + " other lane" + (others == 1 ? "" : "s") +
                       " (the other replicas' ranks) except in the iteration time";
    }
    const auto ks = action_kind_medians(sim), kr = action_kind_medians(compared);
    for (const auto& [kind, value] : kr) {
        if (ks.contains(kind)) {
            m.rows.push_back({"median " + std::string(to_string(kind)), ks.at(kind), value});
        }
    }
    return m;
}

int print_one(const CompareArgs& a, const Timeline& sim, const Measured& m, std::ostream& out) {
    const Timeline& real = m.timeline;
    if (a.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& r : m.rows) {
            list.push_back({{"what", r.what},
                            {"simulated_s", r.simulated},
                            {"measured_s", r.measured},
                            {"error_percent", 100 * r.error()}});
        }
        nlohmann::json j{{"simulated", a.simulated},
                         {"measured", m.path},
                         {"schedule", real.schedule},
                         {"measured_lanes", m.lanes},
                         {"rows", list}};
        if (!m.lanes_note.empty()) {
            j["note"] = m.lanes_note;
        }
        out << j.dump(2) << '\n';
        return kOk;
    }
    out << "Simulated " << printable_name(a.simulated) << " (" << printable_name(sim.source) << ", "
        << printable_name(sim.schedule) << ") vs measured " << printable_name(m.path) << " ("
        << printable_name(real.source) << ", " << printable_name(real.schedule) << ")\n\n";
    TextTable table({"", "simulated", "measured", "error"});
    for (const auto& r : m.rows) {
        table.add_row({r.what, format_duration(r.simulated), format_duration(r.measured),
                       format_signed_percent(r.error())});
    }
    table.right_align(1);
    table.right_align(2);
    table.right_align(3);
    table.print(out, "  ");
    out << "\nerror = (simulated - measured) / measured\n";
    if (!m.lanes_note.empty()) {
        out << "Lanes: " << m.lanes_note << ".\n";
    }
    return kOk;
}

// A figure over several runs: its median, its spread, and the simulation.
struct Spread {
    std::string what;
    double simulated = 0;
    std::vector<double> measured;  // one per run that has the row

    [[nodiscard]] double median() const {
        std::vector<double> v = measured;
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    [[nodiscard]] double lo() const { return *std::min_element(measured.begin(), measured.end()); }
    [[nodiscard]] double hi() const { return *std::max_element(measured.begin(), measured.end()); }
    [[nodiscard]] bool inside() const { return simulated >= lo() && simulated <= hi(); }
    [[nodiscard]] double error() const {
        const double m = median();
        return m > 0 ? (simulated - m) / m : 0;
    }
};

int print_several(const CompareArgs& a, const Timeline& sim, const std::vector<Measured>& runs,
                  std::ostream& out) {
    // Rows in the first run's order; a row the others lack counts their runs only.
    std::vector<Spread> rows;
    for (const Row& r : runs.front().rows) {
        rows.push_back({r.what, r.simulated, {}});
    }
    for (const Measured& m : runs) {
        for (const Row& r : m.rows) {
            const auto it = std::find_if(rows.begin(), rows.end(),
                                         [&r](const Spread& s) { return s.what == r.what; });
            if (it != rows.end()) {
                it->measured.push_back(r.measured);
            }
        }
    }
    std::erase_if(rows, [](const Spread& s) { return s.measured.empty(); });
    if (a.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const Spread& s : rows) {
            list.push_back({{"what", s.what},
                            {"simulated_s", s.simulated},
                            {"measured_s", s.median()},
                            {"measured_min_s", s.lo()},
                            {"measured_max_s", s.hi()},
                            {"runs", s.measured.size()},
                            {"within_spread", s.inside()},
                            {"error_percent", 100 * s.error()}});
        }
        nlohmann::json paths = nlohmann::json::array();
        for (const Measured& m : runs) {
            paths.push_back(m.path);
        }
        out << nlohmann::json{{"simulated", a.simulated},
                              {"measured", paths},
                              {"schedule", runs.front().timeline.schedule},
                              {"rows", list}}
                   .dump(2)
            << '\n';
        return kOk;
    }
    out << "Simulated " << printable_name(a.simulated) << " (" << printable_name(sim.source) << ", "
        << printable_name(sim.schedule) << ") vs " << runs.size() << " measured runs ("
        << printable_name(runs.front().timeline.schedule) << ")\n\n";
    TextTable table({"", "simulated", "measured median", "run to run", "error", "within"});
    int inside = 0;
    for (const Spread& s : rows) {
        const double m = s.median();
        const std::string spread = m > 0
                                       ? format_duration(s.lo()) + " – " + format_duration(s.hi()) +
                                             " (±" + format_percent((s.hi() - s.lo()) / 2 / m) + ")"
                                       : "-";
        inside += s.inside() ? 1 : 0;
        table.add_row({s.what, format_duration(s.simulated), format_duration(m), spread,
                       format_signed_percent(s.error()), s.inside() ? "yes" : "no"});
    }
    for (std::size_t c = 1; c <= 4; ++c) {
        table.right_align(c);
    }
    table.print(out, "  ");
    out << "\nerror = (simulated - median of the measured) / median; within: the simulated "
           "figure lies between the runs' lowest and highest ("
        << inside << " of " << rows.size() << ")\n";
    if (!runs.front().lanes_note.empty()) {
        out << "Lanes: " << runs.front().lanes_note << ".\n";
    }
    return kOk;
}

}  // namespace

int run_compare(const CompareArgs& a, std::ostream& out, std::ostream& err) {
    const auto sim = load(a.simulated, err);
    if (!sim) {
        return kInvalidInput;
    }
    std::vector<Measured> runs;
    for (const std::string& path : a.measured) {
        auto m = measure(*sim, path, a.force, err);
        if (!m) {
            return kInvalidInput;
        }
        runs.push_back(std::move(*m));
    }
    if (runs.empty()) {
        err << "pipewright: compare needs a measured timeline or run folder\n";
        return kUsage;
    }
    return runs.size() == 1 ? print_one(a, *sim, runs.front(), out)
                            : print_several(a, *sim, runs, out);
}

}  // namespace pipewright::cli
