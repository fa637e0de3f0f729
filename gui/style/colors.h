#pragma once

#include <QColor>

#include "studio_core/timeline/timeline_layout.h"

namespace pipewright::gui {

// Okabe-Ito: distinguishable with every common colour-vision deficiency.
[[nodiscard]] QColor block_color(BlockKind kind);
[[nodiscard]] QString block_name(BlockKind kind);
// Chips of stage s in the topology canvas and rows of the model table.
[[nodiscard]] QColor stage_color(int stage);
// Over memory capacity, refused drops.
// The tensor-parallel group's all-reduces inside a forward or backward.
[[nodiscard]] QColor tensor_collective_color(bool dark);
// The experts' all-to-alls inside a block (expert parallelism).
[[nodiscard]] QColor expert_all_to_all_color(bool dark);
// The wait for keys and values inside a block (context parallelism).
[[nodiscard]] QColor context_exchange_color(bool dark);
// The busy share of a collapsed group of lanes: a neutral taupe that is none
// of the action kinds' colours (it was a blue that read as forwards, so a
// collapsed cluster looked as if it ran nothing else).
[[nodiscard]] QColor busy_share_color(bool dark);
[[nodiscard]] QColor warning_color();
// Fits, but with less to spare than what the memory model does not count.
[[nodiscard]] QColor caution_color();

}  // namespace pipewright::gui
