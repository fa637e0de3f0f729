#include "config_import.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "commands.h"
#include "config_project.h"
#include "import_common.h"
#include "option_checks.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/hf_config.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/core/transformer_dims.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::cli {
namespace {

// 8030261248 -> "8,030,261,248".
std::string grouped(double value) {
    return format_grouped(std::llround(value));
}

// "8.03B" for the default file name.
// "MLP 14336 " or "8 experts of 14336, top 2, " (with how many blocks
// stay dense when some do).
std::string mlp_words(const Model& model, std::size_t blocks) {
    std::size_t dense = 0;
    const LayerSpec* routed = nullptr;
    for (std::size_t i = 1; i <= blocks && i < model.layers.size(); ++i) {
        if (transformer_dims(model.layers[i]).moe()) {
            routed = routed != nullptr ? routed : &model.layers[i];
        } else {
            ++dense;
        }
    }
    const auto width = [](double v) { return std::to_string(static_cast<std::int64_t>(v)); };
    if (routed == nullptr) {
        return "MLP " + width(transformer_dims(model.layers.at(1)).ffn) + " ";
    }
    const TransformerDims d = transformer_dims(*routed);
    std::string words =
        width(d.experts) + " experts of " + width(d.expert_ffn) + ", top " + width(d.top_k);
    if (d.shared_experts > 0) {
        words += " and " + width(d.shared_experts) + " shared";
    }
    if (dense > 0) {
        words += " (" + std::to_string(dense) + " dense block" + (dense == 1 ? "" : "s") + ")";
    }
    return words + ", ";
}

std::string billions(double parameters) {
    std::ostringstream s;
    s.precision(parameters >= 1e10 ? 4 : 3);
    s << parameters / 1e9 << "B";
    return s.str();
}

}  // namespace

int run_config_import(const ImportArgs& a, std::ostream& out, std::ostream& err) {
    namespace fs = std::filesystem;
    nlohmann::json config;
    try {
        config = parse_json_file(a.module);
    } catch (const std::exception& e) {
        err << "pipewright: " << printable_name(e.what()) << '\n';
        return kInvalidInput;
    }
    Diagnostics d;
    auto imported = model_from_hf_config(config, a.seq_len.value_or(0), d);
    if (!imported) {
        print_problems(err, printable_name(a.module), located_in(a.module, d));
        return kInvalidInput;
    }
    const auto spec = catalog_device_name(a.device_spec.empty() ? "H100-SXM" : a.device_spec, err);
    if (!spec) {
        return kUsage;
    }
    ConfigProjectOptions options;
    options.devices = a.devices;
    options.nodes = a.nodes;
    options.device_spec = *spec;
    options.batch_size = a.batch_size;
    options.microbatches = a.microbatches;
    auto made = config_project(std::move(*imported), options, d);
    if (!made) {
        print_problems(err, "the imported project", d);
        return kInvalidInput;
    }
    const Project& p = made->project;
    const double parameters = made->parameters;
    const double active = made->active_parameters;
    const SimulationReport& simulated = made->simulated;
    const std::vector<std::string>& notes = made->notes;
    const std::string& architecture = made->architecture;

    std::string target = a.out;
    if (target.empty()) {
        target = (fs::path(a.module).parent_path() /
                  (p.model.name + "-" + billions(parameters) + ".json"))
                     .string();
    }
    std::vector<NamedFile> inputs;
    inputs.push_back(NamedFile{"config", a.module});
    std::vector<NamedFile> outputs;
    outputs.push_back(NamedFile{"--out", target});
    if (!a.dry_run && !check_outputs_spare_inputs(inputs, outputs, err)) {
        return kUsage;
    }
    if (!a.dry_run) {
        if (!check_output_file("project", target, err)) {
            return kInvalidInput;
        }
        try {
            save_project_file(p, target);
        } catch (const std::exception& e) {
            err << "pipewright: cannot write the project " << printable_name(target) << ": "
                << printable_name(e.what()) << '\n';
            return kInvalidInput;
        }
    }
    const LayerSpec& block = p.model.layers.at(1);
    const TransformerDims dims = transformer_dims(block);
    const auto width = [](double v) { return static_cast<std::int64_t>(v); };
    const std::int64_t blocks = static_cast<std::int64_t>(p.model.layers.size()) - 3;
    if (a.json) {
        out << nlohmann::json{{"architecture", architecture},
                              {"parameters", parameters},
                              {"active_parameters", active},
                              {"iteration_s", simulated.iteration_time_s},
                              {"fits", simulated.all_fit},
                              {"blocks", blocks},
                              {"sequence", p.model.input.shape.front()},
                              {"stages", p.placement.size()},
                              {"notes", notes},
                              {"written", a.dry_run ? "" : target}}
                   .dump(2)
            << '\n';
        return kOk;
    }
    out << printable_name(a.module) << ": " << architecture << ", " << blocks
        << " blocks of hidden " << width(dims.hidden) << ", " << width(dims.heads) << " heads ("
        << (dims.latent() ? "latent attention of rank " + std::to_string(width(dims.kv_lora_rank))
                          : std::to_string(width(dims.kv_heads)) + " key/value")
        << "), " << mlp_words(p.model, static_cast<std::size_t>(blocks))
        << layer_choice(block, "activation") << "; sequence "
        << format_count(static_cast<double>(p.model.input.shape.front()))
        << (p.model.tie_word_embeddings ? "; head tied to the embedding" : "") << "\n";
    out << "Parameters  " << grouped(parameters);
    if (active < parameters) {
        out << " (" << grouped(active) << " active per token)";
    }
    out << '\n';
    out << "Simulated   " << format_duration(simulated.iteration_time_s) << " an iteration; ";
    if (simulated.all_fit) {
        out << "every device fits\n";
    } else {
        int over = 0;
        for (const auto& dev : simulated.devices) {
            over += dev.fits ? 0 : 1;
        }
        out << over << " of " << simulated.devices.size()
            << " devices do not fit: use more devices (--devices, --nodes), or plan with "
               "--tensor-parallel auto --data-parallel auto\n";
    }
    for (const std::string& note : notes) {
        out << "Note        " << note << '\n';
    }
    out << '\n'
        << (a.dry_run ? "Not written (--dry-run). " : "Wrote " + printable_name(target) + ": ")
        << p.placement.size() << (p.placement.size() == 1 ? " stage" : " stages") << " on "
        << a.nodes << " × " << a.devices << " " << *spec << ", batch " << a.batch_size << " in "
        << p.training.resolved_microbatches() << " micro-batches, " << p.training.precision_name()
        << ".\n";
    if (!a.dry_run) {
        out << "Next: pipewright simulate " << printable_name(target)
            << "   (or plan --tensor-parallel auto --data-parallel auto)\n";
        if (active < parameters) {
            // The experts are most of such a model: splitting them over the
            // replicas of a planned layout is what makes it fit.
            out << "      plan --expert-parallel auto --data-parallel auto also splits the "
                   "experts over replicas\n";
        }
        // Long sequences fit by splitting them (context parallelism).
        if (constexpr std::int64_t kLong = 32768; p.model.input.shape.front() >= kLong) {
            out << "      plan --context-parallel auto --data-parallel auto also splits each "
                   "sequence of "
                << p.model.input.shape.front() << " tokens over replicas\n";
        }
    }
    return kOk;
}

}  // namespace pipewright::cli
