#include "pipewright/core/analysis.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "parallel/analysis_steps.h"
#include "parallel/replica_groups.h"
#include "pipewright/core/core_sharing.h"
#include "pipewright/core/recomputation_units.h"
#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/torch_csv.h"

namespace pipewright {

std::vector<int> AnalyzedProject::stage_ranks() const {
    std::vector<int> out;
    out.reserve(stages.size());
    for (const auto& s : stages) {
        out.push_back(s.rank);
    }
    return out;
}

namespace analysis_steps {

std::string stage_path(std::size_t i) {
    return "placement[" + std::to_string(i) + "]";
}

std::string join(const std::vector<std::string>& items, std::size_t limit) {
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < limit; ++i) {
        out += (i == 0 ? "" : ", ") + items[i];
    }
    if (items.size() > limit) {
        out += ", ... (" + std::to_string(items.size()) + " in all)";
    }
    return out;
}

}  // namespace analysis_steps

namespace {

using namespace analysis_steps;

void analyze_layers(const Project& p, AnalyzedProject& out, Diagnostics& d) {
    Shape shape = p.model.input.shape;
    DType dtype = p.model.input.dtype;
    bool chain_ok = true;
    for (std::size_t i = 0; i < p.model.layers.size(); ++i) {
        const auto& layer = p.model.layers[i];
        const std::string path = "model.layers[" + std::to_string(i) + "]";
        if (!chain_ok) {
            // Shapes past a broken layer are unknown; still name unknown types.
            if (!layer.type.empty() && find_layer_type(layer.type) == nullptr) {
                d.add(path + ".type", "unknown layer type \"" + layer.type + "\"");
            }
            continue;
        }
        auto analysis = analyze_layer(layer, shape, dtype, d, path);
        if (!analysis) {
            chain_ok = false;
            continue;
        }
        shape = analysis->output_shape;
        dtype = analysis->output_dtype;
        out.layers.push_back(std::move(*analysis));
    }
    if (!chain_ok || out.layers.empty()) {
        return;
    }
    if (p.model.loss == LossKind::cross_entropy && dtype == DType::int64) {
        d.add("model.loss", "cross_entropy needs float logits as the model output");
    }
    out.tied = tied_embeddings(p.model, d);
}

// Layers must be placed exactly once, each stage a contiguous run, stages in
// model order: the concatenation of all stages is the model.
void check_placement_order(const Project& p, AnalyzedProject& out, Diagnostics& d) {
    const auto& layers = p.model.layers;
    if (p.placement.empty()) {
        d.add("placement", "no stages: assign the layers to at least one device");
        return;
    }
    std::vector<int> placed_in(layers.size(), -1);
    int expected_next = 0;
    bool order_ok = true;
    for (std::size_t i = 0; i < p.placement.size(); ++i) {
        const auto& stage = p.placement[i];
        if (stage.layers.empty()) {
            d.add(stage_path(i) + ".layers", "a stage needs at least one layer");
            order_ok = false;
            continue;
        }
        int first = -1;
        int previous = -1;
        for (std::size_t k = 0; k < stage.layers.size(); ++k) {
            const std::string lpath = stage_path(i) + ".layers[" + std::to_string(k) + "]";
            // In a valid placement each layer is the one after the previous,
            // so check that first: a name lookup per layer is O(L) and makes
            // whole-model analysis quadratic (0.1 s at 10,000 layers).
            const bool next_in_order =
                expected_next < static_cast<int>(layers.size()) &&
                layers[static_cast<std::size_t>(expected_next)].name == stage.layers[k];
            int index = next_in_order ? expected_next : p.model.layer_index(stage.layers[k]);
            if (index < 0) {
                d.add(lpath, "no layer is named \"" + stage.layers[k] + "\"");
                order_ok = false;
                continue;
            }
            auto& where = placed_in[static_cast<std::size_t>(index)];
            if (where >= 0) {
                d.add(lpath, "layer \"" + stage.layers[k] + "\" is placed twice (also in " +
                                 stage_path(static_cast<std::size_t>(where)) + ")");
                order_ok = false;
                continue;
            }
            where = static_cast<int>(i);
            if (order_ok && index != expected_next) {
                d.add(lpath, "stages must follow the model order: expected \"" +
                                 (expected_next < static_cast<int>(layers.size())
                                      ? layers[static_cast<std::size_t>(expected_next)].name
                                      : std::string("(end of model)")) +
                                 "\" here, found \"" + stage.layers[k] + "\"");
                order_ok = false;
            }
            expected_next = index + 1;
            if (first < 0) {
                first = index;
            }
            previous = index;
        }
        if (i < out.stages.size() && out.stages[i].index == static_cast<int>(i)) {
            out.stages[i].first_layer = first;
            out.stages[i].last_layer = previous;
        }
    }
    for (std::size_t k = 0; k < layers.size(); ++k) {
        if (placed_in[k] < 0) {
            d.add("model.layers[" + std::to_string(k) + "]",
                  "layer \"" + layers[k].name + "\" is not placed on any device");
        }
    }
}

void resolve_batch(const Project& p, const AnalysisOptions& o, bool microbatching,
                   const Diagnostics& earlier, AnalyzedProject& out, Diagnostics& d) {
    // A value of the file that was refused stands in as a default here;
    // checking the batch against it would add a second, misleading problem.
    if ((!o.batch_size && earlier.mentions("training.batch_size")) ||
        (!o.microbatches && (earlier.mentions("training.microbatches") ||
                             earlier.mentions("training.microbatch_size")))) {
        return;
    }
    const Training& t = p.training;
    const int global_batch = o.batch_size.value_or(t.batch_size);
    const int data_parallel = std::max(1, o.data_parallel.value_or(p.data_parallel.size));
    const int context = o.context_parallel.value_or(p.context_parallel.size);
    const int replicas = batch_shares(data_parallel, context);
    const bool grouped = replicas < data_parallel;
    const std::string batch_path = o.batch_size ? "--batch-size" : "training.batch_size";
    if (global_batch >= 1 && global_batch % replicas != 0) {
        d.add(batch_path,
              "the batch of " + std::to_string(global_batch) +
                  " samples does not split evenly across " + std::to_string(replicas) +
                  (grouped ? " context-parallel groups (" + std::to_string(data_parallel) +
                                 " data-parallel replicas, " + std::to_string(context) +
                                 " to a sequence)"
                           : " data-parallel replicas") +
                  "; use a multiple of " + std::to_string(replicas));
        return;
    }
    // Each replica pipelines its share of the batch.
    const int batch = global_batch / replicas;
    const std::string share = grouped        ? " (each context-parallel group's share of the batch)"
                              : replicas > 1 ? " (each replica's share of the batch)"
                                             : "";
    int m = o.microbatches ? *o.microbatches : t.resolved_microbatches();
    if (!o.microbatches && !t.microbatches && t.microbatch_size && *t.microbatch_size > 0) {
        m = batch / *t.microbatch_size;  // the micro-batch size stays, the count follows
    }
    const std::string m_path = o.microbatches                         ? "--microbatches"
                               : t.microbatch_size && !t.microbatches ? "training.microbatch_size"
                                                                      : "training.microbatches";
    if (batch < 1) {
        d.add(batch_path, "must be at least 1");
        return;
    }
    if (!o.microbatches && !t.microbatches && t.microbatch_size &&
        batch % *t.microbatch_size != 0) {
        // The micro-batch size is set in the file, and neither toolbar nor
        // command line shows it: say where it comes from and the way on.
        const int size = *t.microbatch_size;
        const int below = batch / size * size;
        d.add(m_path, "batch " + std::to_string(batch) + share +
                          " does not split into micro-batches of " + std::to_string(size) +
                          " samples (the project's micro-batch size); use a batch that " +
                          std::to_string(size) + " divides (" +
                          (below > 0 ? std::to_string(below) + " or " : std::string()) +
                          std::to_string(below + size) +
                          "), or give the number of micro-batches instead");
        return;
    }
    if (!microbatching) {
        m = 1;  // naive model parallelism: the whole batch in one piece
    }
    if (m < 1) {
        d.add(m_path, "must be at least 1");
        return;
    }
    if (m > batch) {
        d.add(m_path, std::to_string(m) + " micro-batches is more than the batch of " +
                          std::to_string(batch) + " samples" + share);
        return;
    }
    if (batch % m != 0) {
        std::vector<std::string> divisors;
        for (int k = 1; k <= batch && divisors.size() < 8; ++k) {
            if (batch % k == 0) {
                divisors.push_back(std::to_string(k));
            }
        }
        d.add(m_path, "batch " + std::to_string(batch) + share + " does not split into " +
                          std::to_string(m) + " equal micro-batches; use a divisor of " +
                          std::to_string(batch) + " (" + join(divisors) + ", ...)");
        return;
    }
    // Every (stage, micro-batch) pair becomes a handful of actions; beyond
    // this the schedule no longer fits comfortably in memory.
    constexpr long long kMaxPairs = 10'000'000;
    const long long pairs = static_cast<long long>(m) * static_cast<long long>(p.placement.size());
    if (pairs > kMaxPairs) {
        d.add(m_path, std::to_string(m) + " micro-batches over " +
                          std::to_string(p.placement.size()) + " stages make " +
                          std::to_string(pairs) +
                          " stage × micro-batch pairs; Pipewright schedules up to " +
                          std::to_string(kMaxPairs) + " (use larger micro-batches)");
        return;
    }
    out.microbatches = m;
    out.microbatch_size = batch / m;
    out.project.training.batch_size = global_batch;
}

CollectivePlan collective_plan(const DataParallel& dp) {
    return {dp.zero_stage >= 3, dp.overlap_gradient_sync};
}

void build_schedule(const AnalysisOptions& o, AnalyzedProject& out, Diagnostics& d) {
    const Training& t = out.project.training;
    const std::vector<int> stage_rank = out.stage_ranks();
    std::string csv = o.schedule_csv.value_or(o.schedule ? std::string() : t.schedule.csv_path);
    if (!csv.empty()) {
        const std::string path_name = o.schedule_csv ? "--schedule-csv" : "training.schedule.csv";
        std::filesystem::path file = csv;
        // The project's own path starts from its folder; a command-line path
        // from the current folder, as a shell user expects.
        if (file.is_relative() && !o.base_dir.empty() && !o.schedule_csv) {
            file = o.base_dir / file;
        }
        try {
            Schedule s = load_schedule_csv(file);
            if (s.num_stages != static_cast<int>(stage_rank.size())) {
                d.add(path_name, "the CSV schedule has " + std::to_string(s.num_stages) +
                                     " stages but the placement has " +
                                     std::to_string(stage_rank.size()));
                return;
            }
            for (std::size_t st = 0; st < stage_rank.size(); ++st) {
                if (s.stage_rank[st] != stage_rank[st]) {
                    d.add(path_name, "the CSV runs stage " + std::to_string(st) + " on rank " +
                                         std::to_string(s.stage_rank[st]) +
                                         " but the placement puts it on rank " +
                                         std::to_string(stage_rank[st]) + " (" +
                                         out.ranks[static_cast<std::size_t>(stage_rank[st])].path +
                                         ")");
                    return;
                }
            }
            if (s.num_ranks() != out.num_ranks()) {
                d.add(path_name, "the CSV has " + std::to_string(s.num_ranks()) +
                                     " ranks but the placement uses " +
                                     std::to_string(out.num_ranks()) + " devices");
                return;
            }
            if (s.num_microbatches != out.microbatches) {
                d.add(path_name, "the CSV schedules " + std::to_string(s.num_microbatches) +
                                     " micro-batches but the training settings give " +
                                     std::to_string(out.microbatches));
                return;
            }
            // Already lowered files (torch's among them) wait for each
            // receive where its data is used, as torch's runtime does.
            s = with_receives_where_used(add_communication(s));
            if (out.data_parallel() > 1) {
                s = add_collectives(s, collective_plan(out.project.data_parallel));
            }
            Diagnostics problems = check_schedule(s);
            for (const auto& problem : problems.items()) {
                d.add(path_name + " " + problem.path, problem.message);
            }
            if (problems.empty()) {
                out.schedule = std::move(s);
                out.schedule_from_csv = true;
            }
        } catch (const InputError& e) {
            for (const auto& problem : e.diagnostics().items()) {
                d.add(path_name + (problem.path.empty() ? "" : " " + problem.path),
                      problem.message);
            }
        }
        return;
    }
    const std::string name = o.schedule.value_or(t.schedule.name);
    const std::string path_name = o.schedule ? "--schedule" : "training.schedule";
    try {
        out.schedule =
            with_project_communication(out, generate_schedule(name, stage_rank, out.microbatches));
    } catch (const ScheduleError& e) {
        d.add(path_name, e.what());
    }
}

// training.recompute_blocks narrows full recomputation to the blocks at
// the start of each stage: it needs full recomputation and blocks.
void check_recompute_blocks(const Project& p, Diagnostics& d) {
    const Training& t = p.training;
    if (!t.recompute_blocks) {
        return;
    }
    if (!t.full_recompute()) {
        d.add("training.recompute_blocks",
              "narrows full recomputation to the first blocks of each stage, and this training "
              "recomputes " +
                  std::string(t.recompute == Recompute::none ? "nothing" : "selectively") +
                  ": set training.activation_checkpointing to true, or remove recompute_blocks");
        return;
    }
    const auto& layers = p.model.layers;
    if (std::none_of(layers.begin(), layers.end(),
                     [](const LayerSpec& l) { return checkpointed_alone(l.type); })) {
        d.add("training.recompute_blocks",
              "the model has no blocks (transformer_block, resnet_bottleneck) to recompute; "
              "remove it to recompute each stage whole");
    }
}

}  // namespace

Schedule with_project_communication(const AnalyzedProject& project, const Schedule& compute_only) {
    Schedule s = add_communication(compute_only);
    if (project.data_parallel() > 1) {
        s = add_collectives(s, collective_plan(project.project.data_parallel));
    }
    return s;
}

std::optional<AnalyzedProject> analyze_project(const Project& project,
                                               const AnalysisOptions& options,
                                               Diagnostics& diagnostics) {
    const DeviceCatalog& catalog = options.catalog ? *options.catalog : DeviceCatalog::builtin();
    Diagnostics d;
    AnalyzedProject out;
    out.project = project;

    analyze_layers(project, out, d);
    const DeviceLookup lookup(project.topology);
    resolve_ranks(project, catalog, lookup, out, d);
    check_placement_order(project, out, d);
    if (d.empty()) {
        (void)tensor_size_fits_a_container(project, options, d);
    }
    if (d.empty()) {
        resolve_replicas(project, options, catalog, lookup, out, d);
        check_precision(project, catalog, out, d);
        check_attention_kernel(project, catalog, out, d);
        check_recompute_blocks(project, d);
    }
    if (d.empty()) {
        resolve_tensor_parallel(project, options, lookup, out, d);
    }
    if (d.empty()) {
        resolve_replica_groups(project, options, out, d);
    }
    if (d.empty()) {
        share_calibrated_cores(out);
    }

    std::string schedule_name = options.schedule.value_or(project.training.schedule.name);
    const bool from_csv =
        options.schedule_csv || (!options.schedule && project.training.schedule.from_csv());
    const ScheduleInfo* info = from_csv ? nullptr : find_schedule(schedule_name);
    if (!from_csv && info == nullptr) {
        std::vector<std::string> names;
        for (const auto& s : schedule_catalog()) {
            names.push_back(s.name);
        }
        d.add(options.schedule ? "--schedule" : "training.schedule",
              "unknown schedule \"" + schedule_name + "\" (known: " + join(names) + ")");
    }
    resolve_batch(project, options, info == nullptr || info->microbatching, diagnostics, out, d);
    if (options.schedule) {
        out.project.training.schedule = ScheduleChoice{*options.schedule, ""};
    } else if (options.schedule_csv) {
        out.project.training.schedule = ScheduleChoice{"csv", *options.schedule_csv};
    }
    if (options.microbatches) {
        out.project.training.microbatches = out.microbatches;
        out.project.training.microbatch_size.reset();
    }

    // A schedule is only worth building on a sound pipeline.
    if (d.empty() && (from_csv || info != nullptr)) {
        build_schedule(options, out, d);
    }

    if (!d.empty()) {
        diagnostics.append(d);
        return std::nullopt;
    }
    return out;
}

}  // namespace pipewright
