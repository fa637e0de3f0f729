#pragma once

// What a simulated forward or backward spends waiting on a group of devices
// inside it: its tensor-parallel group's all-reduces, the experts'
// all-to-alls (expert parallelism), the keys and values of the ranks that
// share its sequence (context parallelism). They run between the layers'
// kernels, so they are parts of the action rather than actions of their
// own; the studio draws them as sub-blocks and the trace as slices nested
// in their action, both at its end, kind after kind backwards.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "pipewright/core/schedule.h"

namespace pipewright {

enum class InnerWait : std::uint8_t { tensor, experts, context };
inline constexpr std::array<InnerWait, 3> kInnerWaits{InnerWait::tensor, InnerWait::experts,
                                                      InnerWait::context};

// The trace's name of a kind, in the spirit of PyTorch's action names:
// "TP_ALL_REDUCE", "EP_ALL_TO_ALL", "CP_KV_EXCHANGE".
[[nodiscard]] std::string_view trace_name(InnerWait kind);

// Per kind, per stage: the seconds of one forward and of one backward. A
// kind without stages has none.
class InnerWaitSeconds {
  public:
    using PerStage = std::vector<std::array<double, 2>>;
    [[nodiscard]] PerStage& operator[](InnerWait kind) { return table_[index(kind)]; }
    [[nodiscard]] const PerStage& operator[](InnerWait kind) const { return table_[index(kind)]; }
    [[nodiscard]] bool any() const;
    // The seconds of `kind` in `action`: a forward, or a backward or input
    // gradient, of its stage; 0 for any other action (a weight gradient
    // exchanges nothing) and where the kind has none.
    [[nodiscard]] double seconds(InnerWait kind, const Action& action) const;

  private:
    static std::size_t index(InnerWait kind) { return static_cast<std::size_t>(kind); }
    std::array<PerStage, kInnerWaits.size()> table_;
};

struct Timeline;
class TextSink;

// The timeline's Chrome trace (write_chrome_trace, timeline.h) with each
// forward's and backward's inner waits as slices nested at its end, on its
// compute thread, named by trace_name: what a Perfetto user sees of them.
void write_chrome_trace(const Timeline& timeline, const InnerWaitSeconds& inner, TextSink& out);
[[nodiscard]] std::uint64_t estimate_chrome_trace_bytes(const Timeline& timeline,
                                                        const InnerWaitSeconds& inner);

}  // namespace pipewright
