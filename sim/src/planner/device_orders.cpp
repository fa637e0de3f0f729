// The device orders a pipeline search tries: every order on a small cluster,
// else the file's and a few sorted hierarchically (nodes, then containers,
// then devices), and which of their prefixes give the same split DP.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <set>
#include <utility>

#include "planner/internal.h"

namespace pipewright::planner {

namespace {

std::size_t at(int i) {
    return static_cast<std::size_t>(i);
}

// Nodes, then containers, then devices, each level sorted by the mean score of
// its devices (ties keep the file order), so that a pipeline crosses a node
// boundary only once it has used every device of the node.
std::vector<int> hierarchical_order(const std::vector<DeviceLocation>& devices,
                                    const std::vector<double>& score) {
    struct Group {
        double score = 0;
        std::vector<int> members;
    };
    std::vector<std::vector<Group>> nodes;  // [node][container]
    for (std::size_t d = 0; d < devices.size(); ++d) {
        const auto n = at(devices[d].node);
        const auto c = at(devices[d].container);
        if (nodes.size() <= n) {
            nodes.resize(n + 1);
        }
        if (nodes[n].size() <= c) {
            nodes[n].resize(c + 1);
        }
        nodes[n][c].members.push_back(static_cast<int>(d));
    }
    const auto mean = [&](const std::vector<int>& members) {
        double sum = 0;
        for (int d : members) {
            sum += score[at(d)];
        }
        return members.empty() ? 0.0 : sum / static_cast<double>(members.size());
    };
    std::vector<Group> node_groups;
    for (auto& containers : nodes) {
        for (auto& container : containers) {
            std::stable_sort(container.members.begin(), container.members.end(),
                             [&](int a, int b) { return score[at(a)] < score[at(b)]; });
            container.score = mean(container.members);
        }
        std::stable_sort(containers.begin(), containers.end(),
                         [](const Group& a, const Group& b) { return a.score < b.score; });
        Group node;
        for (const auto& container : containers) {
            node.members.insert(node.members.end(), container.members.begin(),
                                container.members.end());
        }
        node.score = mean(node.members);
        node_groups.push_back(std::move(node));
    }
    std::stable_sort(node_groups.begin(), node_groups.end(),
                     [](const Group& a, const Group& b) { return a.score < b.score; });
    std::vector<int> order;
    for (const auto& node : node_groups) {
        order.insert(order.end(), node.members.begin(), node.members.end());
    }
    return order;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

}  // namespace

void Context::build_orders() {
    const int count = devices();
    std::vector<int> file_order(at(count));
    std::iota(file_order.begin(), file_order.end(), 0);
    if (count <= kExhaustiveDeviceLimit) {
        // Small clusters: every order, so prefixes cover every ordered subset.
        do {
            orders_.push_back(file_order);
        } while (std::next_permutation(file_order.begin(), file_order.end()));
    } else {
        orders_.push_back(file_order);
        const LayerTable& whole = table(1);
        std::vector<double> seconds;
        std::vector<double> memory;
        for (int d = 0; d < count; ++d) {
            seconds.push_back(whole.time[at(cluster_.device_class[at(d)])][at(whole.layers)]);
            memory.push_back(-static_cast<double>(cluster_.specs[at(d)].memory_bytes));
        }
        std::vector<double> slowest_first = seconds;
        for (double& s : slowest_first) {
            s = -s;
        }
        for (const auto& score : {seconds, slowest_first, memory}) {
            auto order = hierarchical_order(cluster_.devices, score);
            if (std::find(orders_.begin(), orders_.end(), order) == orders_.end()) {
                orders_.push_back(std::move(order));
            }
        }
    }
    order_links_.clear();
    for (const auto& order : orders_) {
        std::vector<StageLink> links;
        for (std::size_t k = 0; k + 1 < order.size(); ++k) {
            links.push_back(link(order[k], order[k + 1]));
        }
        order_links_.push_back(std::move(links));
    }
    // Two prefixes with the same device classes and the same links give the
    // same DP: run it once.
    distinct_.assign(at(count) + 1, {});
    std::vector<std::set<std::pair<std::uint64_t, std::uint64_t>>> seen(at(count) + 1);
    for (std::size_t o = 0; o < orders_.size(); ++o) {
        std::uint64_t a = 0x243f6a8885a308d3ULL;
        std::uint64_t b = 0x13198a2e03707344ULL;
        for (std::size_t k = 0; k < orders_[o].size(); ++k) {
            if (k > 0) {
                const StageLink& link = order_links_[o][k - 1];
                const LinkSpec& l = link.spec;
                for (double v :
                     {l.bandwidth_GBps, l.latency_us, l.efficiency, link.group ? 1.0 : 0.0}) {
                    a = mix(a, std::bit_cast<std::uint64_t>(v));
                    b = mix(b ^ 0x5bd1e995ULL, std::bit_cast<std::uint64_t>(v));
                }
            }
            const auto cls = static_cast<std::uint64_t>(cluster_.device_class[at(orders_[o][k])]);
            a = mix(a, cls);
            b = mix(b ^ 0x5bd1e995ULL, cls);
            if (seen[k + 1].insert({a, b}).second) {
                distinct_[k + 1].push_back(static_cast<int>(o));
            }
        }
    }
}

std::vector<std::vector<double>> Context::send_floors(const LayerTable& table) const {
    const auto least = [&](const std::vector<double>& bytes) {
        return table.layers < 2 ? 0.0 : *std::min_element(bytes.begin(), bytes.end() - 1);
    };
    const double group_bytes = least(table.output_bytes);
    const double member_bytes = least(table.member_output_bytes);
    std::vector<std::vector<double>> out;
    for (const auto& links : order_links_) {
        std::vector<double> sends;
        for (const auto& l : links) {
            sends.push_back(l.spec.transfer_seconds(l.group ? group_bytes : member_bytes));
        }
        out.push_back(std::move(sends));
    }
    return out;
}

const std::vector<int>& Context::distinct_orders(int stages) const {
    static const std::vector<int> none;
    return stages >= 1 && at(stages) < distinct_.size() ? distinct_[at(stages)] : none;
}

}  // namespace pipewright::planner
