#include "pipewright/core/analysis.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "parallel/replica_groups.h"
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

namespace {

std::string stage_path(std::size_t i) {
    return "placement[" + std::to_string(i) + "]";
}

std::string join(const std::vector<std::string>& items, std::size_t limit = 12) {
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < limit; ++i) {
        out += (i == 0 ? "" : ", ") + items[i];
    }
    if (items.size() > limit) {
        out += ", ... (" + std::to_string(items.size()) + " in all)";
    }
    return out;
}

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

// Every lookup by path goes through `lookup`'s hash map: a scan per stage
// made validating 10⁵ devices O(N²) (issue 18). One map serves the whole
// analysis: built per step, it was most of a 3D plan's time on 8,192 devices.
void resolve_ranks(const Project& p, const DeviceCatalog& catalog, const DeviceLookup& lookup,
                   AnalyzedProject& out, Diagnostics& d) {
    const auto& devices = lookup.devices();
    if (devices.empty() && !p.topology.nodes.empty()) {
        d.add("topology.nodes", "the topology has no devices");
    }
    std::vector<std::string> device_names;
    for (const auto& loc : devices) {
        device_names.push_back(loc.path);
        try {
            (void)effective_device(p.topology, loc, catalog);
        } catch (const InputError& e) {
            d.add("topology.nodes[" + std::to_string(loc.node) + "].containers[" +
                      std::to_string(loc.container) + "].devices[" + std::to_string(loc.device) +
                      "].spec",
                  e.diagnostics().items().front().message);
        }
    }
    for (std::size_t i = 0; i < p.topology.link_overrides.size(); ++i) {
        const auto& o = p.topology.link_overrides[i];
        for (const auto& end : {o.device_a, o.device_b}) {
            if (!end.empty() && !lookup.find(end)) {
                d.add("topology.link_overrides[" + std::to_string(i) + "].between",
                      "no device \"" + end + "\" in the topology");
            }
        }
    }
    std::unordered_map<std::string_view, int> rank_of;  // views into p.placement
    for (std::size_t i = 0; i < p.placement.size(); ++i) {
        const auto& device = p.placement[i].device;
        if (device.empty()) {
            d.add(stage_path(i) + ".device",
                  "every stage needs a device (a path such as \"" +
                      (device_names.empty() ? std::string("node0/c0/gpu0") : device_names.front()) +
                      "\")");
            continue;
        }
        auto loc = lookup.find(device);
        if (!loc) {
            d.add(stage_path(i) + ".device",
                  "no device \"" + device + "\" in the topology (devices: " + join(device_names) +
                      ")");
            continue;
        }
        if (rank_of.emplace(device, static_cast<int>(out.ranks.size())).second) {
            out.ranks.push_back(*loc);
            try {
                out.rank_specs.push_back(effective_device(p.topology, *loc, catalog).spec);
            } catch (const InputError&) {
                out.rank_specs.push_back(DeviceSpec{});  // reported above
            }
        }
        out.stages.push_back({static_cast<int>(i), rank_of.at(device), 0, 0});
    }
}

// Each rank's tensor-parallel group: its device and the size - 1 devices
// after it in its container. Every device of every group belongs to no other.
std::vector<std::vector<DeviceLocation>> tensor_groups_of(
    const std::vector<DeviceLocation>& ranks, int size, const std::string& size_path,
    const DeviceLookup& lookup, std::unordered_map<std::string, std::string>& used,
    const std::string& whose, Diagnostics& d) {
    const auto& all = lookup.devices();
    std::unordered_map<std::string_view, std::size_t> order;
    for (std::size_t i = 0; i < all.size(); ++i) {
        order.emplace(all[i].path, i);
    }
    std::vector<std::vector<DeviceLocation>> groups;
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
        const std::size_t at = order.at(ranks[rank].path);
        std::vector<DeviceLocation> group;
        for (std::size_t k = at; k < all.size() && group.size() < static_cast<std::size_t>(size);
             ++k) {
            if (all[k].node != all[at].node || all[k].container != all[at].container) {
                break;
            }
            group.push_back(all[k]);
        }
        if (group.size() < static_cast<std::size_t>(size)) {
            d.add(size_path, whose + "rank " + std::to_string(rank) + " (" + ranks[rank].path +
                                 ") leads a tensor-parallel group of " + std::to_string(size) +
                                 " devices, but its container has only " +
                                 std::to_string(group.size()) +
                                 " from it on; place its stage on an earlier device of the "
                                 "container, or use a smaller size");
            groups.push_back({ranks[rank]});
            continue;
        }
        for (std::size_t k = 0; k < group.size(); ++k) {
            const std::string owner = whose + "rank " + std::to_string(rank) + "'s group";
            const auto [it, fresh] = used.emplace(group[k].path, owner);
            if (!fresh && it->second != owner) {
                d.add(size_path, "device " + group[k].path + " would be in " + owner +
                                     " and also in " + it->second +
                                     "; with tensor parallelism a stage takes its device and the " +
                                     std::to_string(size - 1) +
                                     " after it, so leave that many free after each");
            }
        }
        groups.push_back(std::move(group));
    }
    return groups;
}

// The root cause first: a tensor-parallel group lies in one container, so a
// size past the largest one's devices cannot be laid out whatever the model
// or the replicas (it used to lead with a dozen "make heads 99" about the
// model's widths, or with replicas "spanning 100 devices"). False after
// saying so.
bool tensor_size_fits_a_container(const Project& p, const AnalysisOptions& o, Diagnostics& d) {
    const int size = o.tensor_parallel.value_or(p.tensor_parallel.size);
    if (size <= 1 || size > kMaxTensorParallel) {
        return true;  // nothing to place, or refused for its range
    }
    std::size_t largest = 0;
    for (const auto& node : p.topology.nodes) {
        for (const auto& container : node.containers) {
            largest = std::max(largest, container.devices.size());
        }
    }
    if (static_cast<std::size_t>(size) <= largest) {
        return true;
    }
    d.add(o.tensor_parallel ? "--tensor-parallel" : "tensor_parallel.size",
          std::to_string(size) + " is more than the " + std::to_string(largest) + " device" +
              (largest == 1 ? "" : "s") +
              " of the largest container (a tensor-parallel group lies in one container, "
              "where its devices share fast links); use at most " +
              std::to_string(largest) + ", or add devices to a container");
    return false;
}

void resolve_tensor_parallel(const Project& p, const AnalysisOptions& o, const DeviceLookup& lookup,
                             AnalyzedProject& out, Diagnostics& d) {
    TensorParallel& tp = out.project.tensor_parallel;
    tp.size = o.tensor_parallel.value_or(p.tensor_parallel.size);
    tp.sequence_parallel = o.sequence_parallel.value_or(p.tensor_parallel.sequence_parallel);
    const std::string size_path = o.tensor_parallel ? "--tensor-parallel" : "tensor_parallel.size";
    if (tp.size < 1 || tp.size > kMaxTensorParallel) {
        d.add(size_path, "must be from 1 to " + std::to_string(kMaxTensorParallel));
        tp.size = 1;
        return;
    }
    out.tensor_groups.clear();
    out.tensor_shares.clear();
    if (tp.size == 1) {
        return;
    }
    out.tensor_shares = tensor_shares(p.model, out.layers, tp, d);
    // The root cause first, and alone: groups that need more devices than
    // the topology has cannot be fixed by moving one stage (the per-rank
    // problems below would each say to).
    const auto ranks = static_cast<long long>(out.ranks.size());
    const auto replicas = static_cast<long long>(std::max<std::size_t>(1, out.replicas.size()));
    const long long needed = ranks * replicas * tp.size;
    const auto available = static_cast<long long>(lookup.devices().size());
    if (needed > available) {
        long long fits = 1;
        for (long long t = 2; t <= tp.size; ++t) {
            if (ranks * replicas * t <= available) {
                fits = t;
            }
        }
        d.add(size_path,
              std::to_string(ranks) + (ranks == 1 ? " stage device" : " stage devices") +
                  (replicas > 1 ? " in each of " + std::to_string(replicas) + " replicas" : "") +
                  " with groups of " + std::to_string(tp.size) + " need " + std::to_string(needed) +
                  " devices, but the topology has " + std::to_string(available) + "; use " +
                  (fits == 1 ? std::string("no tensor parallelism (size 1)")
                             : "a tensor-parallel size of at most " + std::to_string(fits)) +
                  ", or place the stages on fewer devices (pipewright " +
                  "plan --tensor-parallel " + std::to_string(tp.size) + " does it)");
        return;
    }
    std::unordered_map<std::string, std::string> used;
    for (std::size_t r = 0; r < out.replicas.size(); ++r) {
        const std::string whose = r == 0 ? "" : "replica " + std::to_string(r) + "'s ";
        out.tensor_groups.push_back(
            tensor_groups_of(out.replicas[r], tp.size, size_path, lookup, used, whose, d));
    }
}

void resolve_replicas(const Project& p, const AnalysisOptions& o, const DeviceCatalog& catalog,
                      const DeviceLookup& lookup, AnalyzedProject& out, Diagnostics& d) {
    const int size = o.data_parallel.value_or(p.data_parallel.size);
    const std::string size_path = o.data_parallel ? "--data-parallel" : "data_parallel.size";
    if (size < 1) {
        d.add(size_path, "must be at least 1");
        return;
    }
    out.project.data_parallel.size = size;
    out.replicas = replica_devices(p.data_parallel, size, size_path, lookup, out.ranks, d,
                                   o.tensor_parallel.value_or(p.tensor_parallel.size));
    out.replica_specs.clear();
    out.replica_specs.push_back(out.rank_specs);
    for (std::size_t r = 1; r < out.replicas.size(); ++r) {
        std::vector<DeviceSpec> specs;
        for (const DeviceLocation& loc : out.replicas[r]) {
            try {
                specs.push_back(effective_device(p.topology, loc, catalog).spec);
            } catch (const InputError&) {
                specs.push_back(DeviceSpec{});  // reported with the topology
            }
        }
        out.replica_specs.push_back(std::move(specs));
    }
}

// FP8 training needs FP8 tensor cores on every device of the layout.
void check_precision(const Project& p, const DeviceCatalog& catalog, const AnalyzedProject& out,
                     Diagnostics& d) {
    if (!p.training.float8) {
        return;
    }
    for (std::size_t r = 0; r < out.replicas.size() && r < out.replica_specs.size(); ++r) {
        for (std::size_t k = 0; k < out.replicas[r].size(); ++k) {
            const DeviceSpec& spec = out.replica_specs[r].at(k);
            if (spec.fp8_flops > 0 || spec.name.empty()) {
                continue;
            }
            std::vector<std::string> with_fp8;
            for (const DeviceSpec& s : catalog.specs()) {
                if (s.fp8_flops > 0) {
                    with_fp8.push_back(s.name);
                }
            }
            d.add("training.dtype", "float8 runs the blocks' GEMMs on FP8 tensor cores, which " +
                                        out.replicas[r][k].path + " (" + spec.name +
                                        ") does not have; use bfloat16, or devices with FP8 (" +
                                        join(with_fp8) + ")");
            return;
        }
    }
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
    }
    if (d.empty()) {
        resolve_tensor_parallel(project, options, lookup, out, d);
    }
    if (d.empty()) {
        resolve_replica_groups(project, options, out, d);
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
