// Puts a simulated and a measured timeline side by side: iteration time, busy
// time per device and the median duration of each kind of action, with the
// simulation's error relative to the measurement.
#include "compare_command.h"

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

}  // namespace

void add_compare_command(CLI::App& app, CompareArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "compare", "Compare a simulated and a measured timeline (files or run folders)");
    cmd->add_option("simulated", a.simulated, "Timeline from `simulate --timeline`")->required();
    cmd->add_option("measured", a.measured, "Timeline or folder from `pipewright run`")->required();
    cmd->add_flag("--json", a.json, "Print the comparison as one JSON object");
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
    if (sim.num_ranks() != real.num_ranks()) {
        err << "pipewright: the timelines have " << sim.num_ranks() << " and " << real.num_ranks()
            << " devices; compare runs of the same placement\n";
        return kInvalidInput;
    }
    const TimelineMetrics ms = timeline_metrics(sim), mr = timeline_metrics(real);
    std::vector<Row> rows{{"iteration time", ms.iteration_time_s, mr.iteration_time_s}};
    for (std::size_t r = 0; r < ms.devices.size() && r < mr.devices.size(); ++r) {
        rows.push_back({"busy, rank " + std::to_string(r) + " (" + real.devices[r] + ")",
                        ms.devices[r].busy_s, mr.devices[r].busy_s});
    }
    const auto ks = action_kind_medians(sim), kr = action_kind_medians(real);
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
        out << nlohmann::json{{"simulated", a.simulated},
                              {"measured", a.measured},
                              {"schedule", real.schedule},
                              {"rows", list}}
                   .dump(2)
            << '\n';
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
    return kOk;
}

}  // namespace pipewright::cli
