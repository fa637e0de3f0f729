#include <gtest/gtest.h>

#include "pipewright/core/schedule.h"
#include "studio_core/timeline/action_words.h"

namespace pipewright::gui {
namespace {

std::string words(const std::string& code) {
    const std::optional<Action> action = parse_action(code);
    return action ? action_in_words(*action).toStdString() : "not an action: " + code;
}

TEST(ActionWords, EveryKindOfActionReadsAsASentence) {
    EXPECT_EQ(words("1F2"), "stage 1, forward of micro-batch 2");
    EXPECT_EQ(words("1B2"), "stage 1, backward of micro-batch 2");
    EXPECT_EQ(words("3I0"), "stage 3, input gradient of micro-batch 0");
    EXPECT_EQ(words("3W0"), "stage 3, weight gradient of micro-batch 0");
    EXPECT_EQ(words("0SEND_F3"), "stage 0 sends the activations of micro-batch 3 to stage 1");
    EXPECT_EQ(words("1RECV_F3"), "stage 1 receives the activations of micro-batch 3 from stage 0");
    EXPECT_EQ(words("2SEND_B4"), "stage 2 sends the gradient of micro-batch 4 to stage 1");
    EXPECT_EQ(words("1RECV_B4"), "stage 1 receives the gradient of micro-batch 4 from stage 2");
}

}  // namespace
}  // namespace pipewright::gui
