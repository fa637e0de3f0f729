#include "studio_core/canvas/replica_view.h"

#include <unordered_map>

namespace pipewright::gui {

namespace {

// The report's lane for rank `rank` of simulated replica `replica`, or -1.
int lane_of(const SimulationReport& report, int replica, int rank) {
    const std::size_t ranks =
        report.replica_devices.empty() ? report.devices.size() : report.replica_devices[0].size();
    for (std::size_t c = 0; c < report.replicas.size(); ++c) {
        if (report.replicas[c].replica == replica) {
            const std::size_t lane = c * ranks + static_cast<std::size_t>(rank);
            return lane < report.devices.size() ? static_cast<int>(lane) : -1;
        }
    }
    return -1;
}

}  // namespace

std::map<std::string, ReplicaRole> replica_roles(const SimulationReport& report) {
    std::map<std::string, ReplicaRole> roles;
    // Which simulated replica each replica runs as.
    std::vector<int> stands_for(report.replica_devices.size(), -1);
    for (const ReplicaTiming& t : report.replicas) {
        if (t.replica >= 0 && static_cast<std::size_t>(t.replica) < stands_for.size()) {
            stands_for[static_cast<std::size_t>(t.replica)] = t.replica;
        }
        for (const int m : t.mirrored_by) {
            if (m >= 0 && static_cast<std::size_t>(m) < stands_for.size()) {
                stands_for[static_cast<std::size_t>(m)] = t.replica;
            }
        }
    }
    for (std::size_t r = 0; r < report.replica_devices.size(); ++r) {
        const auto& devices = report.replica_devices[r];
        for (std::size_t k = 0; k < devices.size(); ++k) {
            ReplicaRole role{static_cast<int>(r), static_cast<int>(k), {}};
            const int simulated = stands_for[r];
            if (simulated >= 0 && simulated != static_cast<int>(r)) {
                role.mirrors = report.replica_devices[static_cast<std::size_t>(simulated)][k];
            }
            roles.emplace(devices[k], std::move(role));
        }
    }
    return roles;
}

std::vector<DeviceMetrics> every_replica_device(const SimulationReport& report) {
    std::vector<DeviceMetrics> out = report.devices;
    for (const ReplicaTiming& t : report.replicas) {
        for (const int m : t.mirrored_by) {
            if (m < 0 || static_cast<std::size_t>(m) >= report.replica_devices.size()) {
                continue;
            }
            const auto& devices = report.replica_devices[static_cast<std::size_t>(m)];
            for (std::size_t k = 0; k < devices.size(); ++k) {
                const int lane = lane_of(report, t.replica, static_cast<int>(k));
                if (lane < 0) {
                    continue;
                }
                DeviceMetrics copy = report.devices[static_cast<std::size_t>(lane)];
                copy.name = devices[k];
                out.push_back(std::move(copy));
            }
        }
    }
    return out;
}

std::map<std::string, std::vector<std::string>> tensor_group_members(
    const Project& project, const std::vector<std::string>& leaders) {
    std::map<std::string, std::vector<std::string>> out;
    const int size = project.tensor_parallel.size;
    if (size <= 1) {
        return out;
    }
    const auto all = project.topology.devices();
    std::unordered_map<std::string, std::size_t> order;
    for (std::size_t i = 0; i < all.size(); ++i) {
        order.emplace(all[i].path, i);
    }
    for (const std::string& leader : leaders) {
        const auto at = order.find(leader);
        if (at == order.end()) {
            continue;
        }
        auto& members = out[leader];
        for (std::size_t k = 1; k < static_cast<std::size_t>(size) && at->second + k < all.size();
             ++k) {
            const DeviceLocation& d = all[at->second + k];
            if (d.node != all[at->second].node || d.container != all[at->second].container) {
                break;
            }
            members.push_back(d.path);
        }
    }
    return out;
}

std::vector<DeviceMetrics> with_tensor_group_members(std::vector<DeviceMetrics> devices,
                                                     const Project& project) {
    std::vector<std::string> leaders;
    for (const DeviceMetrics& d : devices) {
        leaders.push_back(d.name);
    }
    const std::size_t count = devices.size();
    const auto groups = tensor_group_members(project, leaders);
    for (std::size_t l = 0; l < count; ++l) {
        const auto members = groups.find(devices[l].name);
        if (members == groups.end()) {
            continue;
        }
        for (const std::string& member : members->second) {
            DeviceMetrics copy = devices[l];
            copy.name = member;
            devices.push_back(std::move(copy));
        }
    }
    return devices;
}

}  // namespace pipewright::gui
