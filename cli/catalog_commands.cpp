#include "catalog_commands.h"

#include "commands.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/schedule_generators.h"
#include "report_format.h"

namespace pipewright::cli {

void add_catalog_commands(CLI::App& app, CatalogArgs& args) {
    app.add_subcommand("schedules", "List the pipeline schedules and their constraints")
        ->add_flag("--json", args.json, "Print as JSON");
    app.add_subcommand("devices", "List the device catalog (peak FLOP/s and memory)")
        ->add_flag("--json", args.json, "Print as JSON");
    app.add_subcommand("layers", "List the layer types and their parameters")
        ->add_flag("--json", args.json, "Print as JSON");
}

namespace {

int list_schedules(const CatalogArgs& args, std::ostream& out) {
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : schedule_catalog()) {
            list.push_back({{"name", s.name},
                            {"title", s.title},
                            {"constraints", s.constraints},
                            {"splits_backward", s.splits_backward},
                            {"multiple_stages_per_device", s.multiple_stages_per_rank},
                            {"microbatching", s.microbatching}});
        }
        out << list.dump(2) << '\n';
        return kOk;
    }
    TextTable table({"schedule", "what it is", "constraints"});
    for (const auto& s : schedule_catalog()) {
        table.add_row({s.name, s.title, s.constraints});
    }
    table.print(out);
    out << "\nA hand-written schedule can be simulated too: --schedule-csv FILE, or\n"
           "\"schedule\": {\"csv\": \"FILE\"} in the project (PyTorch's CSV: one row per rank).\n";
    return kOk;
}

std::string tflops(const DeviceSpec& spec, DType dtype) {
    auto it = spec.peak_flops.find(dtype);
    if (it == spec.peak_flops.end()) {
        return "-";
    }
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", it->second / 1e12);
    return buffer;
}

int list_devices(const CatalogArgs& args, std::ostream& out) {
    const auto& catalog = DeviceCatalog::builtin();
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : catalog.specs()) {
            nlohmann::json peaks = nlohmann::json::object();
            for (const auto& [dtype, flops] : s.peak_flops) {
                peaks[std::string(to_string(dtype))] = flops / 1e12;
            }
            if (s.tf32_flops > 0) {
                peaks["tfloat32"] = s.tf32_flops / 1e12;
            }
            if (s.fp8_flops > 0) {
                peaks["float8"] = s.fp8_flops / 1e12;
            }
            // What the kernel model prices with, named as the catalog names
            // it (docs/project-format.md#device-catalog).
            nlohmann::json attention = nlohmann::json::object();
            for (const auto& [kernel, rate] : s.attention_efficiency) {
                attention[std::string(to_string(kernel))] = {{"forward", rate.forward},
                                                             {"backward", rate.backward}};
            }
            list.push_back({{"name", s.name},
                            {"kind", s.kind},
                            {"description", s.description},
                            {"memory_bytes", s.memory_bytes},
                            {"peak_tflops", peaks},
                            {"memory_bandwidth_GBps", s.memory_bandwidth_GBps},
                            {"sm_count", s.sm_count},
                            {"l2_bandwidth_GBps", s.l2_bandwidth_GBps},
                            {"tma_multicast", s.tma_multicast},
                            {"matmul_efficiency", s.matmul_efficiency},
                            {"memory_efficiency", s.memory_efficiency},
                            {"kernel_overhead_us", s.kernel_overhead_s * 1e6},
                            {"gemm_overhead_us", s.gemm_fixed_s() * 1e6},
                            {"fp8_transposed_copies", s.fp8_transposed_copies},
                            {"attention_efficiency", attention}});
        }
        out << list.dump(2) << '\n';
        return kOk;
    }
    TextTable table({"spec", "kind", "memory", "fp32 TFLOP/s", "fp16", "bf16", "description"});
    for (std::size_t c : {2u, 3u, 4u, 5u}) {
        table.right_align(c);
    }
    for (const auto& s : catalog.specs()) {
        table.add_row({s.name, s.kind, format_bytes(static_cast<double>(s.memory_bytes)),
                       tflops(s, DType::float32), tflops(s, DType::float16),
                       tflops(s, DType::bfloat16), s.description});
    }
    table.print(out);
    return kOk;
}

std::string kind_name(ParamKind k) {
    switch (k) {
        case ParamKind::integer:
            return "integer";
        case ParamKind::number:
            return "number";
        case ParamKind::boolean:
            return "boolean";
        case ParamKind::choice:
            return "choice";
    }
    return "";
}

// "integer", or "one of gelu, swiglu, geglu, relu" for a choice.
std::string kind_text(const ParamSpec& p) {
    if (p.kind != ParamKind::choice) {
        return kind_name(p.kind);
    }
    std::string words;
    for (const std::string& w : p.choices) {
        words += (words.empty() ? "" : ", ") + w;
    }
    return "one of " + words;
}

int list_layers(const CatalogArgs& args, std::ostream& out) {
    if (args.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& t : layer_types()) {
            nlohmann::json params = nlohmann::json::array();
            for (const auto& p : t.params) {
                nlohmann::json pj = {{"name", p.name},
                                     {"kind", kind_name(p.kind)},
                                     {"required", p.required},
                                     {"description", p.description}};
                if (p.kind == ParamKind::choice) {
                    pj["choices"] = p.choices;
                }
                if (!p.required && p.kind == ParamKind::choice) {
                    pj["default"] = p.default_text();
                } else if (!p.required) {
                    pj["default"] = p.default_value;
                }
                params.push_back(std::move(pj));
            }
            list.push_back({{"type", t.type}, {"description", t.description}, {"params", params}});
        }
        out << list.dump(2) << '\n';
        return kOk;
    }
    for (const auto& t : layer_types()) {
        out << t.type << ": " << t.description << '\n';
        for (const auto& p : t.params) {
            out << "    " << p.name << " (" << kind_text(p) << (p.required ? ", required" : "")
                << ")";
            if (!p.description.empty()) {
                out << ": " << p.description;
            }
            out << '\n';
        }
    }
    return kOk;
}

}  // namespace

int run_catalog_command(const CLI::App& app, const CatalogArgs& args, std::ostream& out,
                        std::ostream& err) {
    if (app.got_subcommand("schedules")) {
        return list_schedules(args, out);
    }
    if (app.got_subcommand("devices")) {
        return list_devices(args, out);
    }
    if (app.got_subcommand("layers")) {
        return list_layers(args, out);
    }
    err << "pipewright: no command given (try --help)\n";
    return kUsage;
}

}  // namespace pipewright::cli
