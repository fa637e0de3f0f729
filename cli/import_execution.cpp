// `import` carried out by the backend program (LibTorch reads the file).

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>

#include "backend_commands.h"
#include "import_common.h"
#include "option_checks.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/torchscript_import.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/planner.h"
#include "report_format.h"

namespace pipewright::cli {
namespace {

// "3,224,224" (spaces, brackets and x allowed: "[3, 224, 224]", "3x224x224").
std::optional<Shape> parse_shape(std::string text) {
    for (char& c : text) {
        if (c == 'x' || c == '[' || c == ']' || c == ' ') {
            c = c == 'x' ? ',' : ' ';
        }
    }
    Shape shape;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(',', start);
        std::string part = text.substr(start, end == std::string::npos ? text.npos : end - start);
        part.erase(0, part.find_first_not_of(' '));
        part.erase(part.find_last_not_of(' ') + 1);
        std::int64_t v = 0;
        auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || v < 1 ||
            v > 2147483647) {
            return std::nullopt;
        }
        shape.push_back(v);
        if (end == std::string::npos) {
            break;
        }
        start = end + 1;
    }
    return shape;
}

std::string shape_text(const Shape& s) {
    return to_string(s);
}

std::string glue_text(const std::vector<std::string>& ops) {
    std::string out;
    for (const auto& op : ops) {
        out += (out.empty() ? "then " : ", ") + op;
    }
    return out;
}

// The stage the import placed layer `path` in, or -1.
int stage_of(const std::vector<StageAssignment>& placement, const std::string& path) {
    for (std::size_t s = 0; s < placement.size(); ++s) {
        const auto& names = placement[s].layers;
        if (std::find(names.begin(), names.end(), path) != names.end()) {
            return static_cast<int>(s);
        }
    }
    return -1;
}

void print_layers(std::ostream& out, const backend::ImportResult& r) {
    TextTable table(
        {"layer", "module", "output", "parameters", "FLOP / sample", "kept / sample", "stage"});
    table.right_align(3);
    table.right_align(4);
    table.right_align(5);
    const auto& placement = r.project.placement;
    for (const auto& l : r.layers) {
        const int s = stage_of(placement, l.path);
        const std::string stage = s >= 0 ? std::to_string(s) : std::string();
        std::string module = l.module_type;
        if (!l.glue.empty()) {
            module += " (" + glue_text(l.glue) + ")";
        }
        // Names come from the file: escaped, as the rest of the CLI does.
        table.add_row({printable_name(l.path), printable_name(module), shape_text(l.output_shape),
                       format_count(static_cast<double>(l.parameters)),
                       format_count(l.forward_flops), format_bytes(l.stashed_elements * 4), stage});
    }
    table.print(out, "  ");
}

nlohmann::json result_json(const backend::ImportResult& r, const std::string& written) {
    nlohmann::json layers = nlohmann::json::array();
    const auto& placement = r.project.placement;
    for (const auto& l : r.layers) {
        const int stage = stage_of(placement, l.path);
        layers.push_back({{"name", l.path},
                          {"submodule", l.path},
                          {"module_type", l.module_type},
                          {"then", l.glue},
                          {"output_shape", l.output_shape},
                          {"parameters", l.parameters},
                          {"forward_flops", l.forward_flops},
                          {"stashed_elements", l.stashed_elements},
                          {"stage", stage}});
    }
    nlohmann::json j = {
        {"layers", layers}, {"kept_whole", r.kept_whole}, {"kept_from_file", r.kept_from_file}};
    j["project"] = written.empty() ? nlohmann::json(nullptr) : nlohmann::json(written);
    j["stages"] = r.project.placement.size();
    return j;
}

}  // namespace

int run_import(const ImportArgs& a, std::ostream& out, std::ostream& err) {
    const auto shape = parse_shape(a.input_shape);
    if (!shape) {
        err << "pipewright: --input-shape: expected whole numbers from 1 separated by commas, "
               "such as 3,224,224, got \""
            << a.input_shape << "\"\n";
        return 2;
    }
    namespace fs = std::filesystem;
    std::string target = a.out;
    if (target.empty()) {
        target = fs::path(a.module).replace_extension(".json").string();
    }
    std::vector<NamedFile> inputs;
    inputs.push_back(NamedFile{"TorchScript file", a.module});
    std::vector<NamedFile> outputs;
    outputs.push_back(NamedFile{"--out", target});
    if (!a.dry_run && !check_outputs_spare_inputs(inputs, outputs, err)) {
        return 2;
    }
    if (!a.dry_run && !check_output_file("project", target, err)) {
        return 1;
    }
    // Checked before any layer is measured.
    const auto device_spec =
        catalog_device_name(a.device_spec.empty() ? "cpu" : a.device_spec, err);
    if (!device_spec) {
        return 2;
    }
    backend::ImportOptions o;
    o.module_file = a.module;
    o.input_shape = *shape;
    o.input_dtype = a.input_dtype == "int64" ? DType::int64 : DType::float32;
    o.loss = a.loss == "mse" ? LossKind::mse : LossKind::cross_entropy;
    o.depth = a.depth;
    o.devices = a.devices;
    o.device_spec = *device_spec;
    o.batch_size = a.batch_size;
    o.microbatches = a.microbatches.value_or(0);
    if (a.vocabulary) {
        o.vocabulary = *a.vocabulary;
    }
    o.reinitialise = a.init == "seed";
    o.layer_timeout_s = a.timeout_s;
    backend::ImportResult r;
    try {
        r = backend::import_torchscript(o);
    } catch (const backend::BackendError& e) {
        err << "pipewright: " << a.module << ": " << e.what() << '\n';
        return 1;
    }
    // What is written must be usable at once: checked as simulate would,
    // before and after the planner splits it.
    Diagnostics d;
    if (!analyze_project(r.project, AnalysisOptions{}, d)) {
        print_problems(err, "the imported project", d);
        return 1;
    }
    r.project = placed_by_planner(r.project);
    if (!analyze_project(r.project, AnalysisOptions{}, d)) {
        print_problems(err, "the imported project", d);
        return 1;
    }
    if (!a.dry_run) {
        try {
            save_project_file(r.project, target);
        } catch (const std::exception& e) {
            err << "pipewright: cannot write the project " << printable_name(target) << ": "
                << printable_name(e.what()) << '\n';
            return 1;
        }
    }
    if (a.json) {
        out << result_json(r, a.dry_run ? std::string() : target).dump(2) << '\n';
        return 0;
    }
    out << printable_name(a.module) << ": " << r.layers.size() << " layers of "
        << printable_name(r.project.model.name) << ", input " << shape_text(*shape) << " ("
        << a.input_dtype << ")\n\n";
    print_layers(out, r);
    for (const auto& whole : r.kept_whole) {
        out << "\nKept whole: " << printable_name(whole);
    }
    if (!r.kept_whole.empty()) {
        out << '\n';
    }
    if (a.init == "seed") {
        out << "\nWeights: PyTorch's initialisation drawn from the project's seed";
        if (!r.kept_from_file.empty()) {
            out << ", except (their classes' initialisation is not known; kept from the file): ";
            for (std::size_t i = 0; i < r.kept_from_file.size(); ++i) {
                out << (i > 0 ? ", " : "") << printable_name(r.kept_from_file[i]);
            }
        }
        out << ".\n";
    }
    out << '\n'
        << (a.dry_run ? "Not written (--dry-run). " : "Wrote " + printable_name(target) + ": ")
        << r.project.placement.size() << (r.project.placement.size() == 1 ? " stage" : " stages")
        << " on " << a.devices << " × " << *device_spec << ", batch " << a.batch_size << " in "
        << r.project.training.resolved_microbatches() << " micro-batches.\n";
    if (const auto stages = r.project.placement.size();
        stages < static_cast<std::size_t>(a.devices)) {
        out << "Only " << stages << " of the " << a.devices << " devices hold a stage (one layer "
            << "at least each); `pipewright plan --data-parallel auto` can use the others as "
               "replicas, or import with a larger --depth.\n";
    }
    if (!a.dry_run) {
        out << "Next: pipewright simulate " << printable_name(target)
            << "   (or profile, plan, run)\n";
    }
    return 0;
}

}  // namespace pipewright::cli
