#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/measured_collectives.h"
#include "pipewright/core/tensor_parallel.h"
#include "pipewright/core/topology.h"

namespace pipewright {

// `measured`: the time a device calibration measured for the group's size
// (core/measured_collectives.h), whatever algorithm NCCL chose there.
enum class CollectiveAlgorithm { ring, tree, hierarchical, measured };
// What carries a group's collectives: NCCL between GPUs, Gloo otherwise.
enum class CollectiveLibrary { gloo, nccl };
// NCCL's protocols trade latency for bandwidth (docs/simulator.md): LL and
// LL128 for small messages, Simple for large ones. Gloo has only Simple.
enum class CollectiveProtocol { simple, ll, ll128 };

[[nodiscard]] std::string_view to_string(CollectiveAlgorithm a);
[[nodiscard]] std::string_view to_string(CollectiveProtocol p);
// NCCL for a group of GPUs, Gloo for CPUs.
[[nodiscard]] CollectiveLibrary collective_library(const DeviceSpec& device);

// The links a group of devices reduces over, as the formulas need them.
struct CollectiveGroup {
    int members = 1;
    CollectiveLibrary library = CollectiveLibrary::gloo;
    // The slowest hop of the ring through the members in order (the last
    // back to the first): the lowest achieved bandwidth (its efficiency
    // applied, so 1 here) and the highest latency.
    LinkSpec ring;
    // Two levels, for the hierarchical algorithm: `nodes` nodes with
    // `per_node` members each (0 when the members are not spread evenly),
    // the slowest hop within a node and between consecutive nodes.
    int nodes = 1;
    int per_node = 0;
    LinkSpec intra;
    LinkSpec inter;
    // The ring link was measured as a whole (a profile's collective): the
    // ring formula it was fitted to is the only one that applies.
    bool ring_only = false;
    // The members lie in one machine whose collectives a device calibration
    // measured: those times price the group (null: the links' model).
    std::shared_ptr<const MeasuredCollectives> measured;
};

// Groups that run the same collective at the same moment (the rings of a
// stage's tensor-parallel positions, every replica's tied-embedding pair)
// share the links they cross that are shared at all: a node's network
// interface, a container's path to another container. Counted per link
// resource (ResolvedLink::resource), each group once however many of its
// hops cross it, as NCCL orders a ring to cross each node boundary once.
class LinkSharing {
  public:
    LinkSharing() = default;
    // `groups`, each in ring order; the hops counted are those
    // collective_group prices: the ring's, and the hierarchical algorithm's
    // hops between consecutive nodes.
    LinkSharing(const std::vector<std::vector<DeviceLocation>>& groups, const LinkResolver& links);
    // How many of the groups cross `resource` (at least 1).
    [[nodiscard]] int groups_over(const std::string& resource) const;

  private:
    std::unordered_map<std::string, int> groups_;
};

// Describes the group of `members` (in ring order). With `sharing`, a hop
// over a link that n of the concurrent groups cross gets 1/n of its
// bandwidth.
[[nodiscard]] CollectiveGroup collective_group(const std::vector<DeviceLocation>& members,
                                               const LinkResolver& links, CollectiveLibrary library,
                                               const LinkSharing* sharing = nullptr);
// The same for members that are all `device`s: NCCL between GPUs, Gloo
// between CPUs, and the device's calibrated collectives when they lie in one
// container (one machine) and the calibration measured a group as large.
[[nodiscard]] CollectiveGroup collective_group(const std::vector<DeviceLocation>& members,
                                               const LinkResolver& links, const DeviceSpec& device,
                                               const LinkSharing* sharing = nullptr);
// The group priced by a link measured for a whole collective (a profile's):
// the ring formula it was fitted to, and no other algorithm.
[[nodiscard]] CollectiveGroup with_measured_ring(CollectiveGroup group, const LinkSpec& measured);

struct CollectiveTime {
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
    CollectiveProtocol protocol = CollectiveProtocol::simple;
    double seconds = 0;
};

// Time of one collective over `bytes` (what each member holds) on free
// links, by the fastest algorithm and protocol the group allows. With D
// members, an achieved bandwidth B and a latency α (docs/simulator.md):
//   ring all-reduce         2(D−1)·α + 2(D−1)/D · bytes/B
//   ring reduce-scatter     (D−1)·α + (D−1)/D · bytes/B   (all-gather alike)
//   all-to-all              as a reduce-scatter within a node; over N nodes
//                           of g members, the (D−g)/D of each member's
//                           bytes that leave its node share the node's
//                           link (g of them), beside the traffic within.
//   tree all-reduce         2⌈log₂D⌉·α + 2 · bytes/B
//   hierarchical            the ring formula within each node (g members),
//                           then across the N nodes over the node's link
//                           (shared by its g members, so bytes in all),
//                           then within each node again.
// NCCL adds its launch latency and runs each step with a protocol, which
// scales α and B (LL: a fifth of α at half of B; LL128: two fifths of α at
// 0.92 of B; Simple: as they are).
[[nodiscard]] CollectiveTime collective_time(CollectiveKind kind, double bytes,
                                             const CollectiveGroup& group);

// A stage's tensor-parallel group (`members`, its first device first) as
// the simulator and the planner price its all-reduces: over its links, or
// over `measured` (a profile's all-reduce) when given.
[[nodiscard]] CollectiveGroup tensor_parallel_group(const std::vector<DeviceLocation>& members,
                                                    const LinkResolver& links,
                                                    const DeviceSpec& device,
                                                    const LinkSpec* measured);
// The all-reduces of one layer's share in one micro-batch, forward and
// backward; `element_bytes`: an element's bytes times the micro-batch size.
struct TensorCollectives {
    double forward_s = 0;
    double backward_s = 0;
};
[[nodiscard]] TensorCollectives tensor_collectives(const TensorShare& share, double element_bytes,
                                                   const CollectiveGroup& group);

}  // namespace pipewright
