#pragma once
// The parts of a simulated forward or backward spent waiting on a group of
// devices (tensor-parallel all-reduces, the experts' all-to-alls, the keys
// and values of a shared sequence): drawn on a lane's communication row
// inside their block, keyed in the legend and named in the block's tooltip.
// One table keyed by kind, so that another parallel dimension adds a kind
// here rather than a setter, a counter, a colour and a tooltip line apiece.
#include <QColor>
#include <QString>

#include "pipewright/core/inner_waits.h"

namespace pipewright::gui {

// The kinds and their table are core's (inner_waits.h), which the trace
// export draws alike.
using SubBlock = InnerWait;
inline constexpr auto kSubBlockKinds = kInnerWaits;
using SubBlockSeconds = InnerWaitSeconds;

[[nodiscard]] QColor sub_block_color(SubBlock kind, bool dark);
// The legend's key: "Tensor all-reduce (within F and B)".
[[nodiscard]] QString sub_block_key(SubBlock kind);
// The tooltip's line: "of which 2.1 ms in its tensor-parallel group's …".
[[nodiscard]] QString sub_block_line(SubBlock kind, const QString& duration);

}  // namespace pipewright::gui
