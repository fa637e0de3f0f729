#include "run/rank_checkpoint.h"

#include <filesystem>
#include <mutex>
#include <string_view>
#include <system_error>

#include <ATen/Context.h>

#include "pipewright/backend/backend_error.h"
#include "pipewright/core/output_file.h"
#include "pipewright/core/quantity_format.h"
#include "run/checkpoint.h"
#include "run/rendezvous.h"

namespace pipewright::backend {
namespace fs = std::filesystem;
namespace {

constexpr const char* kRankFormat = "pipewright-rank-checkpoint";

std::string saved_key(int steps_done, int rank) {
    return "checkpoint/" + std::to_string(steps_done) + "/rank-" + std::to_string(rank);
}

std::string stage_key(int stage) {
    return "stage-" + std::to_string(stage);
}

std::string shape_text(const torch::Tensor& t) {
    std::string text = "[";
    for (std::size_t i = 0; i < t.sizes().size(); ++i) {
        text += (i == 0 ? "" : ", ") + std::to_string(t.sizes()[i]);
    }
    return text + "] " + std::string(c10::toString(t.scalar_type()));
}

// The generators this rank draws from: the CPU's, and its GPU's.
std::vector<std::pair<std::string, torch::Device>> generators(const torch::Device& device) {
    std::vector<std::pair<std::string, torch::Device>> g{{"random-cpu", torch::kCPU}};
    if (device.is_cuda()) {
        g.emplace_back("random-device", device);
    }
    return g;
}

// The stage's tensors in a fixed order: parameters, then buffers.
std::vector<std::pair<std::string, torch::Tensor>> stage_tensors(torch::nn::Sequential module) {
    std::vector<std::pair<std::string, torch::Tensor>> tensors;
    int i = 0;
    for (const auto& p : module->parameters()) {
        tensors.emplace_back("param-" + std::to_string(i++), p);
    }
    i = 0;
    for (const auto& b : module->buffers()) {
        tensors.emplace_back("buffer-" + std::to_string(i++), b);
    }
    return tensors;
}

std::int64_t read_int(torch::serialize::InputArchive& archive, const std::string& key) {
    c10::IValue value;
    archive.read(key, value);
    return value.toInt();
}

}  // namespace

RankCheckpoints::RankCheckpoints(const WorkerOptions& o, const AnalyzedProject& project,
                                 c10d::Store& store, std::chrono::milliseconds timeout)
    : rank_(o.rank),
      world_(o.world_size),
      every_(o.settings.checkpoint_every),
      dir_(o.settings.checkpoint_dir),
      resume_from_(o.settings.resume_from),
      layout_(checkpoint_layout(project, o.settings)),
      store_(store),
      timeout_(timeout) {
    if (every_ > 0 && rank_ == 0) {
        // No other rank saves before this one has taken its first step.
        remove_unfinished_checkpoints(dir_);
    }
}

int RankCheckpoints::resume(RankExecutor& executor, const torch::Device& device) const {
    if (resume_from_.empty()) {
        return 0;
    }
    const std::string file = (fs::path(resume_from_) / rank_checkpoint_file(rank_)).string();
    const std::string where = "checkpoint " + file + ": ";
    torch::serialize::InputArchive archive;
    try {
        archive.load_from(file, device);
    } catch (const c10::Error& e) {
        throw BackendError(where + "cannot be read (" + e.what_without_backtrace() + ")");
    }
    c10::IValue format;
    c10::IValue fingerprint;
    if (!archive.try_read("format", format) || !format.isString() ||
        format.toStringRef() != kRankFormat || !archive.try_read("fingerprint", fingerprint)) {
        throw BackendError(where + "is not a Pipewright rank checkpoint");
    }
    if (read_int(archive, "rank") != rank_) {
        throw BackendError(where + "holds the state of rank " +
                           std::to_string(read_int(archive, "rank")) + ", not of rank " +
                           std::to_string(rank_));
    }
    if (fingerprint.toStringRef() != layout_fingerprint(layout_)) {
        throw BackendError(where + "is of another project or layout");
    }
    const int steps_done = static_cast<int>(read_int(archive, "step"));
    const torch::NoGradGuard no_grad;
    for (int s : executor.stages()) {
        torch::serialize::InputArchive stage;
        if (!archive.try_read(stage_key(s), stage)) {
            throw BackendError(where + "has no state of stage " + std::to_string(s));
        }
        for (auto& [key, tensor] : stage_tensors(executor.module(s))) {
            torch::Tensor saved;
            if (!stage.try_read(key, saved)) {
                throw BackendError(where + "stage " + std::to_string(s) + " has no " + key);
            }
            if (saved.sizes() != tensor.sizes() || saved.scalar_type() != tensor.scalar_type()) {
                throw BackendError(where + "stage " + std::to_string(s) + " " + key + " is " +
                                   shape_text(saved) + ", this run's " + shape_text(tensor));
            }
            tensor.copy_(saved);
        }
    }
    torch::serialize::InputArchive optimizer;
    archive.read("optimizer", optimizer);
    executor.load_optimizer(optimizer);
    for (const auto& [key, on] : generators(device)) {
        torch::Tensor state;
        archive.read(key, state);
        at::Generator generator = at::globalContext().defaultGenerator(on);
        const std::lock_guard lock(generator.mutex());
        generator.set_state(state.to(torch::kCPU));
    }
    return steps_done;
}

void RankCheckpoints::after_step(int steps_done, const RankExecutor& executor,
                                 const torch::Device& device) {
    if (every_ <= 0 || steps_done % every_ != 0) {
        return;
    }
    const fs::path partial = fs::path(dir_) / (checkpoint_folder_name(steps_done) + ".partial");
    std::error_code ec;
    fs::create_directories(partial, ec);
    if (ec) {
        throw BackendError("checkpoint: cannot create " + partial.string() + ": " + ec.message());
    }
    torch::serialize::OutputArchive archive;
    archive.write("format", c10::IValue(std::string(kRankFormat)));
    archive.write("fingerprint", c10::IValue(layout_fingerprint(layout_)));
    archive.write("rank", c10::IValue(static_cast<std::int64_t>(rank_)));
    archive.write("step", c10::IValue(static_cast<std::int64_t>(steps_done)));
    for (int s : executor.stages()) {
        torch::serialize::OutputArchive stage;
        for (const auto& [key, tensor] : stage_tensors(executor.module(s))) {
            stage.write(key, tensor.detach());
        }
        archive.write(stage_key(s), stage);
    }
    torch::serialize::OutputArchive optimizer;
    executor.save_optimizer(optimizer);
    archive.write("optimizer", optimizer);
    for (const auto& [key, on] : generators(device)) {
        at::Generator generator = at::globalContext().defaultGenerator(on);
        const std::lock_guard lock(generator.mutex());
        archive.write(key, generator.get_state());
    }
    try {
        // A temporary file beside it, flushed to disk, then renamed.
        OutputFile file(partial / rank_checkpoint_file(rank_));
        archive.save_to([&file](const void* data, std::size_t size) {
            file.write(std::string_view(static_cast<const char*>(data), size));
            return size;
        });
        file.commit();
    } catch (const std::exception& e) {
        throw BackendError("checkpoint: cannot write this rank's state into " + partial.string() +
                           ": " + e.what());
    }
    set_text(store_, saved_key(steps_done, rank_), "1");
    if (rank_ != 0) {
        return;
    }
    std::vector<std::string> keys;
    for (int r = 0; r < world_; ++r) {
        keys.push_back(saved_key(steps_done, r));
    }
    try {
        store_.wait(keys, timeout_);
    } catch (const std::exception&) {
        throw BackendError("checkpoint: not every rank saved its state after step " +
                           std::to_string(steps_done) + " within " +
                           format_duration(static_cast<double>(timeout_.count()) / 1000));
    }
    finish_checkpoint(dir_, partial.string(), steps_done, layout_, world_);
}

}  // namespace pipewright::backend
