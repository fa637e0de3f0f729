#include "pipewright/core/data_parallel.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace pipewright {

namespace {

std::string replicas_path(std::size_t r) {
    return "data_parallel.replicas[" + std::to_string(r - 1) + "]";
}

std::vector<std::vector<DeviceLocation>> default_replicas(
    int size, std::string_view size_path, const DeviceLookup& lookup,
    const std::vector<DeviceLocation>& pipeline, Diagnostics& d, int group_size) {
    const auto& all = lookup.devices();
    std::unordered_map<std::string_view, std::size_t> order;
    for (std::size_t i = 0; i < all.size(); ++i) {
        order.emplace(all[i].path, i);
    }
    std::vector<std::size_t> at;
    for (const DeviceLocation& loc : pipeline) {
        at.push_back(order.at(loc.path));
    }
    const auto [lo, hi] = std::minmax_element(at.begin(), at.end());
    const std::size_t span = *hi - *lo + static_cast<std::size_t>(std::max(1, group_size));
    const std::size_t needed = *lo + span * static_cast<std::size_t>(size);
    if (needed > all.size()) {
        d.add(std::string(size_path),
              std::to_string(size) + " replicas of a pipeline that spans " + std::to_string(span) +
                  (span == 1 ? " device (" : " devices (") + all[*lo].path +
                  (span == 1 ? "" : " to " + all[std::min(*lo + span, all.size()) - 1].path) +
                  ") need " + std::to_string(span * static_cast<std::size_t>(size)) +
                  " devices from " + all[*lo].path + " on, but the topology has " +
                  std::to_string(all.size() - *lo) +
                  "; add devices, use fewer replicas, or list each replica's devices in "
                  "data_parallel.replicas");
        return {pipeline};
    }
    std::vector<std::vector<DeviceLocation>> out{pipeline};
    for (std::size_t r = 1; r < static_cast<std::size_t>(size); ++r) {
        std::vector<DeviceLocation> replica;
        replica.reserve(at.size());
        for (const std::size_t i : at) {
            replica.push_back(all[i + r * span]);
        }
        out.push_back(std::move(replica));
    }
    return out;
}

std::vector<std::vector<DeviceLocation>> listed_replicas(
    const DataParallel& dp, int size, std::string_view size_path, const DeviceLookup& lookup,
    const std::vector<DeviceLocation>& pipeline, Diagnostics& d) {
    if (dp.replicas.size() + 1 != static_cast<std::size_t>(size)) {
        d.add(size_path == "data_parallel.size" ? "data_parallel.replicas" : std::string(size_path),
              std::to_string(size) + " replicas need the devices of " + std::to_string(size - 1) +
                  " more in data_parallel.replicas (the placement is the first), but it lists " +
                  std::to_string(dp.replicas.size()));
        return {pipeline};
    }
    std::unordered_map<std::string_view, std::string> used;  // device -> where it is used
    for (std::size_t k = 0; k < pipeline.size(); ++k) {
        used.emplace(pipeline[k].path, "the placement (rank " + std::to_string(k) + ")");
    }
    std::vector<std::vector<DeviceLocation>> out{pipeline};
    bool ok = true;
    for (std::size_t r = 1; r < static_cast<std::size_t>(size); ++r) {
        const auto& names = dp.replicas[r - 1];
        if (names.size() != pipeline.size()) {
            d.add(replicas_path(r), "lists " + std::to_string(names.size()) +
                                        " devices, but the pipeline has " +
                                        std::to_string(pipeline.size()) +
                                        " ranks: a replica needs one device for each, in order");
            ok = false;
            continue;
        }
        std::vector<DeviceLocation> replica;
        for (std::size_t k = 0; k < names.size(); ++k) {
            const std::string path = replicas_path(r) + "[" + std::to_string(k) + "]";
            const auto loc = lookup.find(names[k]);
            if (!loc) {
                d.add(path, "no device \"" + names[k] + "\" in the topology");
                ok = false;
                continue;
            }
            const auto [it, fresh] = used.emplace(names[k], path);
            if (!fresh) {
                d.add(path, "device \"" + names[k] + "\" is used twice: also by " + it->second);
                ok = false;
                continue;
            }
            replica.push_back(*loc);
        }
        out.push_back(std::move(replica));
    }
    return ok ? out : std::vector<std::vector<DeviceLocation>>{pipeline};
}

}  // namespace

std::vector<std::vector<DeviceLocation>> replica_devices(
    const DataParallel& dp, int size, std::string_view size_path, const DeviceLookup& lookup,
    const std::vector<DeviceLocation>& pipeline, Diagnostics& d, int group_size) {
    if (size <= 1 || pipeline.empty()) {
        return {pipeline};
    }
    return dp.replicas.empty() ? default_replicas(size, size_path, lookup, pipeline, d, group_size)
                               : listed_replicas(dp, size, size_path, lookup, pipeline, d);
}

}  // namespace pipewright
