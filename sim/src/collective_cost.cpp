#include "pipewright/sim/collective_cost.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <span>

namespace pipewright {

std::string_view to_string(CollectiveProtocol p) {
    switch (p) {
        case CollectiveProtocol::simple:
            return "Simple";
        case CollectiveProtocol::ll:
            return "LL";
        case CollectiveProtocol::ll128:
            return "LL128";
    }
    return "?";
}

CollectiveLibrary collective_library(const DeviceSpec& device) {
    return device.kind == "gpu" ? CollectiveLibrary::nccl : CollectiveLibrary::gloo;
}

std::string_view to_string(CollectiveAlgorithm a) {
    switch (a) {
        case CollectiveAlgorithm::ring:
            return "ring";
        case CollectiveAlgorithm::tree:
            return "tree";
        case CollectiveAlgorithm::hierarchical:
            return "hierarchical";
        case CollectiveAlgorithm::measured:
            return "measured";
    }
    return "?";
}

namespace {

// Accumulates the slowest of several links, by the bandwidth they achieve.
class Slowest {
  public:
    void add(const LinkSpec& l) {
        bandwidth_ = std::min(bandwidth_, l.bandwidth_GBps * l.efficiency);
        latency_ = std::max(latency_, l.latency_us);
        any_ = true;
    }
    [[nodiscard]] LinkSpec link() const {
        return any_ ? LinkSpec{bandwidth_, latency_} : LinkSpec{};
    }

  private:
    double bandwidth_ = std::numeric_limits<double>::infinity();
    double latency_ = 0;
    bool any_ = false;
};

// How one protocol runs a collective's steps: its fixed launch latency,
// and the fractions of a step's latency and of the bandwidth it sees.
struct Protocol {
    CollectiveProtocol name;
    double launch_us;
    double latency_scale;
    double bandwidth_scale;
};

// Gloo's ring: the links as they are.
constexpr std::array kGloo{Protocol{CollectiveProtocol::simple, 0, 1, 1}};
// NCCL's tuning model (src/graph/tuning.cc, NCCL 2.2x): base latencies of
// 6.6 (LL), 14 (LL128) and 8.4 µs (Simple) for a ring, 6.8, 14 and 8.4 for
// a tree; per-step hardware latencies whose ratio to Simple's is about
// 0.2 for LL and 0.4 for LL128 on NVLink, PCIe and the network alike; LL
// moves half its bytes as flags, LL128 120 of every 128.
constexpr std::array kNcclRing{Protocol{CollectiveProtocol::ll, 6.6, 0.2, 0.5},
                               Protocol{CollectiveProtocol::ll128, 14.0, 0.4, 0.92},
                               Protocol{CollectiveProtocol::simple, 8.4, 1, 1}};
constexpr std::array kNcclTree{Protocol{CollectiveProtocol::ll, 6.8, 0.2, 0.5},
                               Protocol{CollectiveProtocol::ll128, 14.0, 0.4, 0.92},
                               Protocol{CollectiveProtocol::simple, 8.4, 1, 1}};

// Seconds for `steps` latencies and `bytes` at the link's bandwidth under
// protocol `p`; free links (bandwidth 0 means unknown, as elsewhere) cost
// only their latency.
double cost(const LinkSpec& l, const Protocol& p, double steps, double bytes) {
    const double wire = l.bandwidth_GBps > 0
                            ? bytes / (l.bandwidth_GBps * l.efficiency * p.bandwidth_scale * 1e9)
                            : 0;
    return steps * l.latency_us * p.latency_scale * 1e-6 + wire;
}

// A ring over d members; `phases` is 2 for an all-reduce, 1 otherwise.
double ring(const LinkSpec& l, const Protocol& p, int d, int phases, double bytes) {
    if (d <= 1) {
        return 0;
    }
    const double share = static_cast<double>(d - 1) / d;
    return phases * cost(l, p, d - 1, share * bytes);
}

}  // namespace

namespace {

// The hops a group's collectives cross: its ring's (the last member back to
// the first), then, when it spans several nodes, from the first member on
// each node to the first on the next (the hierarchical algorithm's).
template <typename Visit>
void visit_hops(const std::vector<DeviceLocation>& members, Visit&& visit) {
    for (std::size_t i = 0; i < members.size(); ++i) {
        visit(members[i], members[(i + 1) % members.size()]);
    }
    std::map<int, const DeviceLocation*> first_on_node;
    for (const DeviceLocation& m : members) {
        first_on_node.emplace(m.node, &m);
    }
    if (first_on_node.size() < 2) {
        return;
    }
    for (auto it = first_on_node.begin(); it != first_on_node.end(); ++it) {
        auto next = std::next(it) == first_on_node.end() ? first_on_node.begin() : std::next(it);
        visit(*it->second, *next->second);
    }
}

}  // namespace

LinkSharing::LinkSharing(const std::vector<std::vector<DeviceLocation>>& groups,
                         const LinkResolver& links) {
    for (const auto& members : groups) {
        if (members.size() < 2) {
            continue;
        }
        std::set<std::string> crossed;
        visit_hops(members, [&](const DeviceLocation& a, const DeviceLocation& b) {
            crossed.insert(links.between(a, b).resource);
        });
        for (const std::string& resource : crossed) {
            ++groups_[resource];
        }
    }
}

int LinkSharing::groups_over(const std::string& resource) const {
    const auto it = groups_.find(resource);
    return it == groups_.end() ? 1 : std::max(1, it->second);
}

CollectiveGroup collective_group(const std::vector<DeviceLocation>& members,
                                 const LinkResolver& links, CollectiveLibrary library,
                                 const LinkSharing* sharing) {
    CollectiveGroup g;
    g.library = library;
    g.members = static_cast<int>(members.size());
    if (members.size() < 2) {
        return g;
    }
    // The link between two members as this group sees it: its share of a
    // link the concurrent groups cross too.
    const auto hop = [&](const DeviceLocation& a, const DeviceLocation& b) {
        const ResolvedLink link = links.between(a, b);
        LinkSpec spec = link.spec;
        if (sharing != nullptr) {
            spec.bandwidth_GBps /= sharing->groups_over(link.resource);
        }
        return spec;
    };
    Slowest ring_hops;
    for (std::size_t i = 0; i < members.size(); ++i) {
        ring_hops.add(hop(members[i], members[(i + 1) % members.size()]));
    }
    g.ring = ring_hops.link();

    std::map<int, std::vector<const DeviceLocation*>> by_node;
    for (const DeviceLocation& m : members) {
        by_node[m.node].push_back(&m);
    }
    const std::size_t per_node = by_node.begin()->second.size();
    const bool even = std::all_of(by_node.begin(), by_node.end(),
                                  [&](const auto& n) { return n.second.size() == per_node; });
    g.nodes = static_cast<int>(by_node.size());
    if (!even || by_node.size() < 2 || per_node < 2) {
        return g;
    }
    g.per_node = static_cast<int>(per_node);
    Slowest intra;
    Slowest inter;
    for (auto it = by_node.begin(); it != by_node.end(); ++it) {
        const auto& local = it->second;
        for (std::size_t i = 0; i < local.size(); ++i) {
            intra.add(hop(*local[i], *local[(i + 1) % local.size()]));
        }
        auto next = std::next(it) == by_node.end() ? by_node.begin() : std::next(it);
        inter.add(hop(*local.front(), *next->second.front()));
    }
    g.intra = intra.link();
    g.inter = inter.link();
    return g;
}

CollectiveGroup collective_group(const std::vector<DeviceLocation>& members,
                                 const LinkResolver& links, const DeviceSpec& device,
                                 const LinkSharing* sharing) {
    CollectiveGroup group = collective_group(members, links, collective_library(device), sharing);
    const auto one_machine = [&] {
        return std::all_of(members.begin(), members.end(), [&](const DeviceLocation& m) {
            return m.node == members.front().node && m.container == members.front().container;
        });
    };
    // A calibration measured its machine's collectives alone; the groups of
    // one machine that run at once each have their own links (NVSwitch), so
    // no sharing applies inside it.
    if (device.collectives != nullptr && members.size() >= 2 &&
        static_cast<int>(members.size()) <= device.collectives->largest_group() && one_machine()) {
        group.measured = device.collectives;
    }
    return group;
}

CollectiveGroup with_measured_ring(CollectiveGroup group, const LinkSpec& measured) {
    group.ring = measured;
    group.ring_only = true;
    group.measured = nullptr;  // the profile measured this transport itself
    return group;
}

CollectiveGroup tensor_parallel_group(const std::vector<DeviceLocation>& members,
                                      const LinkResolver& links, const DeviceSpec& device,
                                      const LinkSpec* measured) {
    CollectiveGroup group = collective_group(members, links, device);
    return measured != nullptr ? with_measured_ring(group, *measured) : group;
}

TensorCollectives tensor_collectives(const TensorShare& share, double element_bytes,
                                     const CollectiveGroup& group) {
    const auto all_reduce_s = [&](double elements) {
        return collective_time(CollectiveKind::all_reduce, elements * element_bytes, group).seconds;
    };
    return {share.forward_reductions * all_reduce_s(share.forward_elements),
            share.backward_reductions * all_reduce_s(share.backward_elements)};
}

namespace {

// Every member sends its (d − 1)/d of `bytes` to the others at once, as
// point-to-point transfers (NCCL's grouped send/receive: its Simple
// protocol). Within one node, over the slowest hop; over several nodes of g
// members each, the part that leaves a node, (d − g)/d, shares the node's
// link among its g members while the rest crosses the node's own links.
CollectiveTime all_to_all_time(double bytes, const CollectiveGroup& group) {
    const int d = group.members;
    const bool nccl = group.library == CollectiveLibrary::nccl && !group.ring_only;
    const Protocol& p = nccl ? kNcclRing.back() : kGloo.front();
    double seconds = ring(group.ring, p, d, 1, bytes);
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
    if (!group.ring_only && group.per_node >= 2 && group.nodes >= 2) {
        const int g = group.per_node;
        const double within = cost(group.intra, p, g - 1, bytes * (g - 1) / d);
        const double across = cost(group.inter, p, group.nodes - 1, bytes * g * (d - g) / d);
        seconds = std::max(within, across);
        algorithm = CollectiveAlgorithm::hierarchical;
    }
    return {algorithm, p.name, seconds + p.launch_us * 1e-6};
}

}  // namespace

CollectiveTime collective_time(CollectiveKind kind, double bytes, const CollectiveGroup& group) {
    const int d = group.members;
    if (d <= 1 || bytes <= 0) {
        return {};
    }
    if (group.measured != nullptr) {
        if (const auto seconds = group.measured->seconds(kind, d, bytes)) {
            return {CollectiveAlgorithm::measured, CollectiveProtocol::simple, *seconds};
        }
    }
    if (kind == CollectiveKind::all_to_all) {
        return all_to_all_time(bytes, group);
    }
    const int phases = kind == CollectiveKind::all_reduce ? 2 : 1;
    // A measured ring link was fitted to the plain ring formula: Gloo's.
    const bool nccl = group.library == CollectiveLibrary::nccl && !group.ring_only;
    const std::span<const Protocol> rings = nccl ? std::span<const Protocol>(kNcclRing) : kGloo;
    const std::span<const Protocol> trees = nccl ? std::span<const Protocol>(kNcclTree) : kGloo;
    CollectiveTime best{CollectiveAlgorithm::ring, CollectiveProtocol::simple,
                        std::numeric_limits<double>::infinity()};
    const auto consider = [&best](CollectiveAlgorithm a, const Protocol& p, double seconds) {
        seconds += p.launch_us * 1e-6;
        if (seconds < best.seconds) {
            best = {a, p.name, seconds};
        }
    };
    for (const Protocol& p : rings) {
        consider(CollectiveAlgorithm::ring, p, ring(group.ring, p, d, phases, bytes));
    }
    if (group.ring_only) {
        return best;
    }
    if (kind == CollectiveKind::all_reduce) {
        const double depth = std::ceil(std::log2(static_cast<double>(d)));
        for (const Protocol& p : trees) {
            consider(CollectiveAlgorithm::tree, p, cost(group.ring, p, 2 * depth, 2 * bytes));
        }
    }
    if (group.per_node >= 2 && group.nodes >= 2) {
        const int g = group.per_node;
        // Reduce-scatter within the node (and all-gather after, for an
        // all-reduce); between them, each member's shard crosses the nodes.
        for (const Protocol& p : rings) {
            const double within = phases * ring(group.intra, p, g, 1, bytes);
            const double across = ring(group.inter, p, group.nodes, phases, bytes);
            consider(CollectiveAlgorithm::hierarchical, p, within + across);
        }
    }
    return best;
}

}  // namespace pipewright
