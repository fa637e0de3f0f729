// The analysis's steps that lay the project out on devices: each stage's
// rank and device, the tensor-parallel groups, the replicas, and the
// precision the devices must support (analysis_steps.h).
#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

#include "parallel/analysis_steps.h"
#include "parallel/replica_groups.h"
#include "pipewright/core/transformer_dims.h"

namespace pipewright::analysis_steps {

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

namespace {

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

}  // namespace

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

namespace {

// The first device of the layout whose figures lack what `has` asks for
// (its path and figures), and the catalog's devices that have it: what a
// refusal names.
struct DeviceWithout {
    std::string path;
    const DeviceSpec* spec = nullptr;
    std::vector<std::string> catalog_with;
};

std::optional<DeviceWithout> first_device_without(
    const AnalyzedProject& out, const DeviceCatalog& catalog,
    const std::function<bool(const DeviceSpec&)>& has) {
    for (std::size_t r = 0; r < out.replicas.size() && r < out.replica_specs.size(); ++r) {
        for (std::size_t k = 0; k < out.replicas[r].size(); ++k) {
            const DeviceSpec& spec = out.replica_specs[r].at(k);
            if (spec.name.empty() || has(spec)) {  // unnamed: reported with the topology
                continue;
            }
            DeviceWithout found{out.replicas[r][k].path, &spec, {}};
            for (const DeviceSpec& s : catalog.specs()) {
                if (has(s)) {
                    found.catalog_with.push_back(s.name);
                }
            }
            return found;
        }
    }
    return std::nullopt;
}

}  // namespace

void check_precision(const Project& p, const DeviceCatalog& catalog, const AnalyzedProject& out,
                     Diagnostics& d) {
    if (!p.training.float8) {
        return;
    }
    const auto without =
        first_device_without(out, catalog, [](const DeviceSpec& s) { return s.fp8_flops > 0; });
    if (without) {
        d.add("training.dtype", "float8 runs the blocks' GEMMs on FP8 tensor cores, which " +
                                    without->path + " (" + without->spec->name +
                                    ") does not have; use bfloat16, or devices with FP8 (" +
                                    join(without->catalog_with) + ")");
    }
}

void check_attention_kernel(const Project& p, const DeviceCatalog& catalog,
                            const AnalyzedProject& out, Diagnostics& d) {
    const AttentionKernel kernel = p.training.attention_kernel;
    if (kernel == AttentionKernel::flash2 || !any_flash_attention(p.model.layers)) {
        return;
    }
    const auto without = first_device_without(
        out, catalog, [kernel](const DeviceSpec& s) { return s.measured_attention(kernel); });
    if (!without) {
        return;
    }
    // The other fused kernel, where this device has its rate (cuDNN's on
    // Blackwell for FlashAttention-3), before the one that prices anywhere.
    const DeviceSpec& spec = *without->spec;
    std::string instead = "\"flash2\"";
    for (const AttentionKernel other : {AttentionKernel::cudnn, AttentionKernel::flash3}) {
        if (other != kernel && spec.measured_attention(other)) {
            instead = "\"" + std::string(to_string(other)) + "\" (measured on " + spec.name +
                      ") or " + instead;
        }
    }
    d.add("training.attention_kernel",
          std::string(display_name(kernel)) +
              (kernel == AttentionKernel::flash3 ? " runs on Hopper GPUs only and" : "") +
              " has no measured rate on " + without->path + " (" + spec.name + "); use " + instead +
              (without->catalog_with.empty() ? std::string()
                                             : ", or devices the catalog measured it on (" +
                                                   join(without->catalog_with) + ")"));
}

}  // namespace pipewright::analysis_steps
