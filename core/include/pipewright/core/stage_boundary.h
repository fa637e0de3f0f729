#pragma once

#include "pipewright/core/analysis.h"
#include "pipewright/core/topology.h"

namespace pipewright {

// What a member of a tensor-parallel group holds of layer `layer`'s output
// where a stage boundary or a unit of recomputation begins after it, as a
// number of equal slices of the whole: t where sequence parallelism leaves
// the output split over the sequence (a block's, a row-parallel linear's,
// the embedding's, a norm's or an activation's between them), else 1.
// Megatron-LM sends each member's [s/t, b, h] to its counterpart in the next
// stage under sequence parallelism, and so do Pipewright's runs; a split
// over the features (a column-parallel linear whose partner is in the next
// stage) is gathered first, and without sequence parallelism a block's
// output is all-reduced whole. A unit of recomputation keeps what crossed,
// or what its first layer takes inside a stage (the same: no unit begins
// between a column-parallel linear and its partner).
[[nodiscard]] int boundary_slices(const AnalyzedProject& project, int layer);

// 1 / boundary_slices: the share of layer `layer`'s output that crosses a
// stage boundary after it, per member.
[[nodiscard]] double boundary_share(const AnalyzedProject& project, int layer);

// Whether the members of a tensor-parallel group send their shares of a
// stage's output over one link of class `c` together, so that it carries the
// group's bytes: a node's network (which a DGX spreads over a port a GPU).
// Inside a node each member has a path of its own (NVLink, a machine's
// loopback), and the link carries one member's.
[[nodiscard]] constexpr bool group_shares_link(LinkClass c) {
    return c == LinkClass::inter_node;
}

}  // namespace pipewright
