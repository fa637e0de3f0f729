// `pipewright run`: loading a project for a run, the ranks of a node, and the
// entry point of the supervisor (run_supervisor.h) that hosts or joins the
// rendezvous, starts this node's workers and watches them.
#include "pipewright/backend/launcher.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/transformer_dims.h"
#include "pipewright/core/zero_bubble_auto.h"
#include "run/context_parallel_refusals.h"
#include "run/run_supervisor.h"

namespace pipewright::backend {

int default_threads_per_rank(int ranks_on_this_machine) {
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    return std::max(1, static_cast<int>(cores) / std::max(1, ranks_on_this_machine));
}

std::optional<AnalyzedProject> load_for_run(const RunSettings& s, std::ostream& err,
                                            LoadPurpose purpose) {
    LoadedProject loaded = load_project_file(s.project);
    Diagnostics problems = loaded.diagnostics;
    std::optional<AnalyzedProject> analyzed;
    if (loaded.project) {
        AnalysisOptions options;
        options.schedule = s.schedule;
        options.schedule_csv = s.schedule_csv;
        options.microbatches = s.microbatches;
        options.batch_size = s.batch_size;
        options.data_parallel = s.data_parallel;
        options.tensor_parallel = s.tensor_parallel;
        options.expert_parallel = s.expert_parallel;
        options.base_dir = std::filesystem::path(s.project).parent_path();
        analyzed = analyze_project(*loaded.project, options, problems);
        // zb-auto's lists depend on the costs, which the front end sends.
        if (analyzed && s.schedule_costs && !analyzed->schedule_from_csv &&
            schedule_kind(analyzed->schedule.name) == ScheduleKind::zb_auto) {
            try {
                analyzed->schedule = with_project_communication(
                    *analyzed, generate_zb_auto(analyzed->stage_ranks(), analyzed->microbatches,
                                                auto_costs_from_text(*s.schedule_costs)));
            } catch (const ScheduleError& e) {
                problems.add("--schedule-costs", e.what());
                analyzed.reset();
            }
        }
        // ZeRO-2 and -3 change what each replica holds between the actions
        // (a gradient shard, parameters gathered per stage); the executor
        // implements the all-reduce and the sharded optimizer of ZeRO-1
        // only. Refused here, before any worker starts, rather than run as
        // something else than the simulation predicts.
        if (purpose == LoadPurpose::train && analyzed && analyzed->data_parallel() > 1 &&
            analyzed->project.data_parallel.zero_stage >= 2) {
            const int zero = analyzed->project.data_parallel.zero_stage;
            problems.add("data_parallel.zero_stage",
                         "ZeRO stage " + std::to_string(zero) +
                             " is simulation-only: real runs all-reduce the gradients (stage 0) "
                             "or also shard the optimizer state (stage 1). Set zero_stage to 0 "
                             "or 1 to run it; `simulate` predicts stage " +
                             std::to_string(zero));
            analyzed.reset();
        }
        // Context parallelism: token models split over their group, the
        // rest refused in words (context_parallel_refusals.h).
        if (purpose == LoadPurpose::train && analyzed &&
            refuse_unsupported_context_parallel(*analyzed, problems)) {
            analyzed.reset();
        }
        // Torch 1.13 has no FP8 tensors; the simulator prices FP8 GEMMs.
        if (purpose == LoadPurpose::train && analyzed && analyzed->project.training.float8) {
            problems.add("training.dtype",
                         "float8: FP8 training is simulation-only: the backend's Torch has no "
                         "FP8 tensors. `simulate` prices it; run with bfloat16");
            analyzed.reset();
        }
        // Multi-head latent attention and the other features below are
        // priced by the simulator; the backend's block does not build them,
        // so such a block is refused rather than trained as something else.
        // Its mixture of experts holds each expert whole: not split over a
        // tensor-parallel group.
        for (std::size_t i = 0;
             purpose == LoadPurpose::train && analyzed && i < analyzed->project.model.layers.size();
             ++i) {
            const LayerSpec& layer = analyzed->project.model.layers[i];
            if (layer.type != "transformer_block") {
                continue;
            }
            const TransformerDims dims = transformer_dims(layer);
            // The features the backend's block does not build, by field.
            const bool split_experts = dims.moe() && analyzed->project.tensor_parallel.size > 1;
            const std::array<std::tuple<bool, const char*, const char*>, 5> unbuilt{{
                {split_experts, ".experts", "a mixture of experts under tensor parallelism"},
                {dims.latent(), ".kv_lora_rank", "multi-head latent attention"},
                {dims.sliding_window > 0, ".sliding_window", "a sliding attention window"},
                {dims.qk_norm, ".qk_norm", "a query and key norm"},
                {dims.post_norms, ".post_norms", "a block with post-norms"},
            }};
            for (const auto& [used, field, words] : unbuilt) {
                if (used) {
                    problems.add("model.layers[" + std::to_string(i) + "]" + field,
                                 std::string(words) +
                                     " is simulation-only for now: real runs build blocks with "
                                     "ordinary attention and whole experts. `simulate` and "
                                     "`plan` price it");
                    analyzed.reset();
                    break;
                }
            }
        }
        // Tensor parallelism: each stage's layers cut over its group
        // (tensor_parallel_layers.h). Sequence parallelism needs a token
        // sequence that splits evenly, and dropout the group's random
        // streams in step: refused rather than run as something else.
        if (purpose == LoadPurpose::train && analyzed &&
            analyzed->project.tensor_parallel.size > 1) {
            const auto& model = analyzed->project.model;
            const int size = analyzed->project.tensor_parallel.size;
            const bool tokens = model.input.shape.size() == 1 && !model.layers.empty() &&
                                model.layers.front().type == "embedding";
            if (analyzed->project.tensor_parallel.sequence_parallel &&
                (!tokens || model.input.shape[0] % size != 0)) {
                problems.add("tensor_parallel.sequence_parallel",
                             tokens ? "the sequence of " + std::to_string(model.input.shape[0]) +
                                          " tokens does not split into " + std::to_string(size) +
                                          " equal slices; use a size that divides it"
                                    : "real runs split the sequence of a model that starts with "
                                      "an embedding of a token sequence only; set "
                                      "sequence_parallel to false to run this one");
                analyzed.reset();
            }
            for (std::size_t i = 0; analyzed && i < analyzed->project.model.layers.size(); ++i) {
                const LayerSpec& layer = analyzed->project.model.layers[i];
                if (layer.type == "transformer_block" &&
                    static_cast<int>(transformer_dims(layer).kv_heads) % size != 0) {
                    problems.add("model.layers[" + std::to_string(i) + "].kv_heads",
                                 "real runs split key/value heads over the tensor-parallel "
                                 "group, so its size " +
                                     std::to_string(size) +
                                     " must divide kv_heads; replicating them, as the "
                                     "simulation prices, is not done by real runs yet");
                    analyzed.reset();
                    break;
                }
                if (const std::string_view field = block_dropout_field(layer); !field.empty()) {
                    problems.add("model.layers[" + std::to_string(i) + "]." + std::string(field),
                                 "dropout in a block with tensor parallelism needs the group's "
                                 "random streams kept in step (Megatron-LM's RNG tracker), which "
                                 "real runs do not do yet; set the block's dropouts to 0, or "
                                 "tensor_parallel.size to 1, to run");
                    analyzed.reset();
                    break;
                }
                if (layer.type == "dropout" && layer_param(layer, "p") > 0) {
                    problems.add("model.layers[" + std::to_string(i) + "]",
                                 "dropout with tensor parallelism needs the group's random "
                                 "streams kept in step (Megatron-LM's RNG tracker), which real "
                                 "runs do not do yet; set its p to 0, or tensor_parallel.size "
                                 "to 1, to run");
                    analyzed.reset();
                }
            }
        }
    }
    if (!problems.empty() || !analyzed) {
        err << "pipewright: " << s.project << ": " << problems.size() << " problem"
            << (problems.size() == 1 ? "" : "s") << ":\n";
        for (const auto& d : problems.items()) {
            err << "  " << (d.path.empty() ? "" : d.path + ": ") << d.message << '\n';
        }
        return std::nullopt;
    }
    return analyzed;
}

NodeRanks node_ranks(int world, int nnodes, int node_rank, std::optional<int> nproc_per_node) {
    if (nnodes < 1) {
        throw std::invalid_argument("--nnodes must be at least 1");
    }
    if (node_rank < 0 || node_rank >= nnodes) {
        throw std::invalid_argument("--node-rank must be from 0 to " + std::to_string(nnodes - 1) +
                                    " with --nnodes " + std::to_string(nnodes) + ", got " +
                                    std::to_string(node_rank));
    }
    if (nproc_per_node) {
        if (*nproc_per_node * nnodes != world) {
            throw std::invalid_argument(
                "--nproc-per-node " + std::to_string(*nproc_per_node) + " on " +
                std::to_string(nnodes) + " node" + (nnodes == 1 ? "" : "s") + " makes " +
                std::to_string(*nproc_per_node * nnodes) + " ranks, but the run has " +
                std::to_string(world) + " (one per device of every replica)");
        }
    } else if (world % nnodes != 0) {
        throw std::invalid_argument("the run's " + std::to_string(world) +
                                    " ranks (one per device of every replica) do not split "
                                    "evenly over " +
                                    std::to_string(nnodes) +
                                    " nodes; give --nproc-per-node or another --nnodes");
    }
    const int per_node = nproc_per_node.value_or(world / nnodes);
    return {node_rank * per_node, per_node};
}

RunOutcome launch_run(const RunOptions& o, std::ostream& err) {
    return RunSupervisor(o, err).run();
}

}  // namespace pipewright::backend
