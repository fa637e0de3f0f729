#pragma once

#include <QString>

#include "pipewright/core/schedule.h"

namespace pipewright::gui {

// An action in words, for people who do not read the schedule notation:
// 1B2 is "stage 1, backward of micro-batch 2", 0SEND_F3 "stage 0 sends the
// activations of micro-batch 3 to stage 1". Stages and micro-batches count
// from 0, as in the codes shown beside.
[[nodiscard]] QString action_in_words(const Action& action);

// A kind of action in words: "forward", "input gradient", "send of
// activations" (the code, e.g. SEND_F, is for the caller to put beside).
[[nodiscard]] QString action_kind_in_words(ActionType type);

}  // namespace pipewright::gui
