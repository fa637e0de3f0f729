#include "backend_test_util.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "pipewright/backend/data.h"
#include "pipewright/backend/executor.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/run_folder_names.h"

namespace pipewright::test {

namespace {

// Stage st's rank: around the ranks (looped), or down and back for ZB-V and
// DualPipeV.
int rank_of_stage(const MlpSpec& s, int st) {
    if (s.schedule == "zbv" || s.schedule == "dualpipev") {
        return st < s.ranks ? st : 2 * s.ranks - 1 - st;
    }
    return st % s.ranks;
}

}  // namespace

std::string mlp_project_json(const MlpSpec& s) {
    nlohmann::json layers = nlohmann::json::array();
    std::vector<std::string> names;
    for (int i = 0; i < s.layers; ++i) {
        layers.push_back({{"name", "fc" + std::to_string(i)},
                          {"type", "linear"},
                          {"in_features", s.width},
                          {"out_features", s.width}});
        names.push_back("fc" + std::to_string(i));
        if (i + 1 < s.layers) {
            layers.push_back({{"name", "act" + std::to_string(i)}, {"type", "gelu"}});
            names.push_back("act" + std::to_string(i));
        }
    }
    nlohmann::json devices = nlohmann::json::array();
    for (int r = 0; r < s.ranks * s.replicas; ++r) {
        devices.push_back({{"name", "cpu" + std::to_string(r)}, {"spec", "cpu"}});
    }
    nlohmann::json placement = nlohmann::json::array();
    const auto n = names.size();
    if (!s.stage_entries.empty() &&
        (s.stage_entries.size() != static_cast<std::size_t>(s.stages) ||
         static_cast<std::size_t>(
             std::accumulate(s.stage_entries.begin(), s.stage_entries.end(), 0)) != n)) {
        throw std::invalid_argument("MlpSpec::stage_entries must give every stage its entries");
    }
    std::size_t next = 0;
    for (int st = 0; st < s.stages; ++st) {
        const auto lo = next;
        const auto hi =
            s.stage_entries.empty()
                ? n * static_cast<std::size_t>(st + 1) / static_cast<std::size_t>(s.stages)
                : lo + static_cast<std::size_t>(s.stage_entries[static_cast<std::size_t>(st)]);
        next = hi;
        nlohmann::json ls(
            std::vector<std::string>(names.begin() + static_cast<std::ptrdiff_t>(lo),
                                     names.begin() + static_cast<std::ptrdiff_t>(hi)));
        placement.push_back(
            {{"device", "localhost/proc/cpu" + std::to_string(rank_of_stage(s, st))},
             {"layers", ls}});
    }
    nlohmann::json optimizer{{"type", s.optimizer}, {"lr", s.optimizer == "sgd" ? 0.05 : 0.01}};
    if (s.optimizer == "sgd") {
        optimizer["momentum"] = 0.9;
    }
    nlohmann::json project{
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "mlp-test"},
          {"input", {{"shape", {s.width}}, {"dtype", "float32"}}},
          {"loss", "mse"},
          {"layers", layers}}},
        {"topology",
         {{"nodes",
           {{{"name", "localhost"}, {"containers", {{{"name", "proc"}, {"devices", devices}}}}}}}}},
        {"placement", placement},
        {"training",
         {{"batch_size", s.batch},
          {"microbatches", s.microbatches},
          {"schedule", s.schedule},
          {"optimizer", optimizer},
          {"steps", 3},
          {"dtype", "float32"},
          {"activation_checkpointing", s.checkpointing},
          {"seed", s.seed}}}};
    if (s.replicas > 1) {
        project["data_parallel"] = {{"size", s.replicas},
                                    {"zero_stage", s.zero_stage},
                                    {"overlap_gradient_sync", s.overlap_gradient_sync},
                                    {"bucket_MiB", s.bucket_MiB}};
    }
    return project.dump(2);
}

namespace {
AnalyzedProject analyze_loaded(LoadedProject loaded) {
    Diagnostics problems = loaded.diagnostics;
    std::optional<AnalyzedProject> p;
    if (loaded.project) {
        p = analyze_project(*loaded.project, AnalysisOptions{}, problems);
    }
    if (!problems.empty() || !p) {
        std::string all;
        for (const auto& d : problems.items()) {
            all += d.path + ": " + d.message + "\n";
        }
        throw std::runtime_error("test project is invalid:\n" + all);
    }
    return *p;
}
}  // namespace

AnalyzedProject analyze_text(const std::string& json) {
    return analyze_loaded(parse_project_text(json));
}

AnalyzedProject analyze_file(const std::string& path) {
    return analyze_loaded(load_project_file(path));
}

std::vector<torch::Tensor> reference_parameters(const AnalyzedProject& p, int steps,
                                                torch::Dtype dtype) {
    const backend::SyntheticTask task(p, dtype);
    return reference_parameters(p, steps, dtype, [&](int step) { return task.batch(step); });
}

std::vector<torch::Tensor> reference_parameters(const AnalyzedProject& p, int steps,
                                                torch::Dtype dtype,
                                                const std::function<backend::Batch(int)>& batches) {
    auto model =
        backend::build_model(p, static_cast<std::uint64_t>(p.project.training.seed), dtype);
    model->train();
    auto params = model->parameters();
    auto optimizer = backend::make_optimizer(p.project.training.optimizer, params);
    for (int step = 0; step < steps; ++step) {
        const auto batch = batches(step);
        optimizer->zero_grad();
        for (int mb = 0; mb < p.microbatches; ++mb) {
            auto out = model->forward(batch.inputs[static_cast<std::size_t>(mb)]);
            auto loss = backend::compute_loss(p.project.model.loss, out,
                                              batch.targets[static_cast<std::size_t>(mb)]) /
                        static_cast<double>(p.microbatches);
            loss.backward();
        }
        optimizer->step();
    }
    return params;
}

std::vector<torch::Tensor> saved_stage_parameters(const std::filesystem::path& out, int stage,
                                                  int replica, int member) {
    std::vector<torch::Tensor> saved;
    torch::load(saved, (out / params_file_name(stage, replica, member)).string());
    return saved;
}

double max_relative_difference(const std::vector<torch::Tensor>& a,
                               const std::vector<torch::Tensor>& b) {
    if (a.size() != b.size()) {
        return std::numeric_limits<double>::infinity();
    }
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].sizes() != b[i].sizes()) {
            return std::numeric_limits<double>::infinity();
        }
        const auto x = a[i].to(torch::kFloat64), y = b[i].to(torch::kFloat64);
        // Relative to the tensor's largest entry: entries near zero would
        // turn rounding noise into huge element-wise ratios.
        const double rel =
            (x - y).abs().max().item<double>() / std::max(y.abs().max().item<double>(), 1e-12);
        worst = std::max(worst, rel);
    }
    return worst;
}

}  // namespace pipewright::test
