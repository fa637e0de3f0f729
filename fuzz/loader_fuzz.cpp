// libFuzzer target for every user-facing loader: a project (with its schedule
// CSV), a timeline, a measured profile, a device catalog, a layer of the
// layer catalog and a schedule CSV built from arbitrary bytes must never
// crash, hang or leak, and what they accept must keep their promises (a
// timeline or profile they read writes back to the same value). Only the
// documented exceptions are caught; anything else escapes and the fuzzer
// reports it.
//
// The first byte chooses the loader (kLoaders: 'P', 'T', 'R', 'D', 'L', 'C', 'M', 'H';
// any other byte picks one by its value) and the rest is that loader's file.
// One target rather than one per loader: scripts/fuzz-smoke.sh gets 60 s in
// CI, which one process spends fuzzing instead of starting six; the loaders
// share one corpus and dictionary; and a mutated first byte hands one
// format's file to another loader, which is the mix-up users make (a
// timeline given as a profile). A new loader is one more row of kLoaders and
// a seed folder under fuzz/corpus/.
//
// Project inputs: the bytes before the first NUL are a project file; the
// bytes after it are a schedule CSV. A project that names a CSV schedule is
// given that CSV, written to a private temporary folder, instead of a path of
// its choosing: the fuzzer must not read whatever file an input names
// (/dev/stdin would block, /dev/zero never ends).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "pipewright/core/analysis.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/hf_config.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/output_file.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/run_records.h"
#include "pipewright/core/schedule.h"
#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/timeline.h"

namespace {

constexpr const char* kCsvName = "schedule.csv";

std::filesystem::path g_scratch;  // removed at exit

void remove_scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(g_scratch, ignored);
}

const std::filesystem::path& scratch_dir() {
    if (g_scratch.empty()) {
        std::error_code ec;
        const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
        std::string pattern =
            ((ec ? std::filesystem::path("/tmp") : tmp) / "pipewright-fuzz.XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::perror("loader_fuzz: mkdtemp");
            std::abort();
        }
        g_scratch = pattern;
        std::atexit(remove_scratch);
    }
    return g_scratch;
}

// A broken promise of the API: report it like a crash.
void require(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "loader_fuzz: contract violated: %s\n", what);
        std::abort();
    }
}

void fuzz_project(const std::string& text, const std::string& csv) {
    pipewright::LoadedProject loaded = pipewright::parse_project_text(text);  // never throws
    require(loaded.project.has_value() || !loaded.diagnostics.empty(),
            "parse_project_text returned no project and no diagnostic");
    if (!loaded.project || !loaded.diagnostics.empty()) {
        return;
    }
    pipewright::Project& project = *loaded.project;
    pipewright::AnalysisOptions options;  // builtin catalog, the project's own settings
    if (project.training.schedule.from_csv()) {
        const std::filesystem::path file = scratch_dir() / kCsvName;
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(csv.data(), static_cast<std::streamsize>(csv.size()));
        out.close();
        require(!out.fail(), "cannot write the scratch schedule CSV");
        project.training.schedule.csv_path = kCsvName;
        options.base_dir = scratch_dir();
    }
    pipewright::Diagnostics problems;
    const std::optional<pipewright::AnalyzedProject> analyzed =
        pipewright::analyze_project(project, options, problems);
    require(analyzed.has_value() == problems.empty(),
            "analyze_project must return a project exactly when it reports no problem");
}

void fuzz_schedule_csv(const std::string& text) {
    pipewright::Schedule schedule;
    try {
        schedule = pipewright::schedule_from_csv(text);
    } catch (const pipewright::InputError&) {
        return;  // documented: malformed cells, misplaced stages
    }
    const pipewright::Diagnostics problems = pipewright::check_schedule(schedule);
    if (problems.empty()) {
        // A sound schedule stays sound once its sends and receives are added.
        const pipewright::Schedule lowered = pipewright::add_communication(schedule);
        require(pipewright::check_schedule(lowered).empty(),
                "check_schedule accepts a schedule but rejects add_communication of it");
    }
}

// The document of a JSON file as the file loaders see it: unset when the text
// is not JSON, too deep, or repeats a key (every loader refuses those).
std::optional<nlohmann::json> document(const std::string& text) {
    pipewright::ParsedJson parsed = pipewright::parse_json(text);
    require(parsed.value.has_value() || !parsed.problems.empty(),
            "parse_json returned no document and no problem");
    if (!parsed.problems.empty()) {
        return std::nullopt;
    }
    return std::move(parsed.value);
}

void fuzz_project_and_csv(const std::string& input) {
    const std::size_t nul = input.find('\0');
    const std::string project_text = input.substr(0, nul);
    const std::string csv_text = nul == std::string::npos ? input : input.substr(nul + 1);
    fuzz_project(project_text, csv_text);
    fuzz_schedule_csv(csv_text);
}

void fuzz_timeline(const std::string& text) {
    const auto j = document(text);
    if (!j) {
        return;
    }
    pipewright::Timeline timeline;
    try {
        timeline = pipewright::timeline_from_json(*j);
    } catch (const pipewright::InputError& e) {
        require(!e.diagnostics().empty(), "timeline_from_json threw an InputError without reason");
        return;
    }
    // What is written reads back to what was written (fields the format
    // leaves out, such as bytes of a compute action, are dropped once).
    const nlohmann::json written = pipewright::timeline_to_json(timeline);
    require(pipewright::timeline_to_json(pipewright::timeline_from_json(written)) == written,
            "a timeline read back from its own JSON differs");
    // The streamed writers walk every event and sample of what was accepted.
    pipewright::CountingSink counted;
    pipewright::write_timeline_json(timeline, counted);
    pipewright::write_chrome_trace(timeline, counted);
    (void)timeline.makespan_s();
}

void fuzz_profile(const std::string& text) {
    const auto j = document(text);
    if (!j) {
        return;
    }
    pipewright::Profile profile;
    try {
        profile = pipewright::profile_from_json(*j);
    } catch (const pipewright::InputError& e) {
        require(!e.diagnostics().empty(), "profile_from_json threw an InputError without reason");
        return;
    }
    require(pipewright::profile_from_json(pipewright::profile_to_json(profile)) == profile,
            "a profile read back from its own JSON differs");
}

void fuzz_device_catalog(const std::string& text) {
    const auto j = document(text);
    if (!j) {
        return;
    }
    try {
        const pipewright::DeviceCatalog catalog = pipewright::DeviceCatalog::from_json(*j);
        for (const auto& spec : catalog.specs()) {
            require(catalog.find(spec.name) == &spec, "a catalog lists a device name twice");
            require(spec.flops_for(pipewright::DType::bfloat16) > 0,
                    "an accepted device has no float32 figure to fall back to");
        }
    } catch (const pipewright::InputError& e) {
        require(!e.diagnostics().empty(), "DeviceCatalog::from_json threw without reason");
    }
}

// A layer as a project writes it ({"type": "conv2d", "in_channels": 3, ...});
// "input" and "input_dtype" (not fields of layers) give the shape and type
// of one sample it gets.
void fuzz_layer(const std::string& text) {
    const auto j = document(text);
    if (!j || !j->is_object()) {
        return;
    }
    pipewright::LayerSpec layer;
    pipewright::Shape input = {3, 32, 32};
    pipewright::DType dtype = pipewright::DType::float32;
    for (const auto& [key, value] : j->items()) {
        if (key == "type" && value.is_string()) {
            layer.type = value.get<std::string>();
        } else if (key == "input" && value.is_array()) {
            input.clear();
            for (const auto& dim : value) {
                input.push_back(dim.is_number_integer() ? dim.get<std::int64_t>() : 0);
            }
        } else if (key == "input_dtype" && value.is_string()) {
            dtype = pipewright::parse_dtype(value.get<std::string>()).value_or(dtype);
        } else if (key != "type" && key != "input" && key != "input_dtype") {
            layer.params[key] = value;
        }
    }
    pipewright::Diagnostics problems;
    const auto analysis = pipewright::analyze_layer(layer, input, dtype, problems, "layer");
    require(analysis.has_value() == problems.empty(),
            "analyze_layer must return an analysis exactly when it reports no problem");
    const pipewright::LayerTypeInfo* info = pipewright::find_layer_type(layer.type);
    if (info == nullptr) {
        try {
            (void)pipewright::layer_param(layer, "in_features");
            require(false, "layer_param read a parameter of an unknown layer type");
        } catch (const pipewright::InputError&) {
            return;  // documented: an unknown type is the caller's to handle
        }
    }
    for (const auto& spec : info->params) {
        (void)pipewright::layer_param(layer, spec.name);  // any value, never a throw
    }
}

// A run folder's records: one text is tried as a rank record, as metrics.json
// and as a run summary (a fuzzer mixes them up as a studio reading the wrong
// file would). What is accepted must read back from its own JSON.
template <typename T>
void fuzz_run_record(const nlohmann::json& j,
                     std::optional<T> (*read)(const nlohmann::json&, pipewright::Diagnostics&),
                     const char* what) {
    pipewright::Diagnostics problems;
    const std::optional<T> value = read(j, problems);
    require(value.has_value() == problems.empty(),
            "a run record reader must return a value exactly when it reports no problem");
    if (value) {
        // Compared as written: a NaN loss ("NaN" in the file) is the same
        // loss read back, though NaN != NaN as a double.
        pipewright::Diagnostics again;
        const nlohmann::json written = pipewright::to_json(*value);
        const std::optional<T> back = read(written, again);
        require(back.has_value() && pipewright::to_json(*back) == written, what);
    }
}

void fuzz_run_records(const std::string& text) {
    const auto j = document(text);
    if (!j) {
        return;
    }
    fuzz_run_record(*j, pipewright::read_rank_record, "a rank record differs read back");
    fuzz_run_record(*j, pipewright::read_run_metrics, "run metrics differ read back");
    fuzz_run_record(*j, pipewright::read_run_summary, "a run summary differs read back");
}

struct Loader {
    char tag;
    void (*fuzz)(const std::string& input);
};

// A Hugging Face config (`pipewright import config.json`): read into a
// model whose layers then analyse one after the other, as the import's
// project would.
void fuzz_hf_config(const std::string& text) {
    const auto j = document(text);
    if (!j) {
        return;
    }
    pipewright::Diagnostics problems;
    const auto model = pipewright::model_from_hf_config(*j, 0, problems);
    require(model.has_value() == problems.empty(),
            "model_from_hf_config must return a model exactly when it reports no problem");
    if (!model) {
        return;
    }
    pipewright::Shape shape = model->model.input.shape;
    pipewright::DType dtype = model->model.input.dtype;
    for (const pipewright::LayerSpec& layer : model->model.layers) {
        pipewright::Diagnostics layer_problems;
        const auto analysis =
            pipewright::analyze_layer(layer, shape, dtype, layer_problems, "layer");
        if (!analysis) {
            return;  // a width the layer refuses (said in words)
        }
        shape = analysis->output_shape;
        dtype = analysis->output_dtype;
    }
}

constexpr Loader kLoaders[] = {
    {'P', fuzz_project_and_csv}, {'T', fuzz_timeline},  {'R', fuzz_profile},
    {'D', fuzz_device_catalog},  {'L', fuzz_layer},     {'C', fuzz_schedule_csv},
    {'M', fuzz_run_records},     {'H', fuzz_hf_config},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    constexpr std::size_t kCount = sizeof kLoaders / sizeof kLoaders[0];
    const Loader* loader = &kLoaders[data[0] % kCount];
    for (const Loader& l : kLoaders) {
        if (static_cast<std::uint8_t>(l.tag) == data[0]) {
            loader = &l;
        }
    }
    loader->fuzz(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
    return 0;
}
