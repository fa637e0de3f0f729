// The device-independent parts of the GPU path, checked on CPUs: which device
// a run asks for, how transfers are grouped into the channels NCCL needs,
// and the action clock the executor times with.
#include <gtest/gtest.h>

#include "execution/action_clock.h"
#include "execution/compute_device.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/schedule_generators.h"
#include "transport/transfer_channels.h"

namespace pipewright::backend {
namespace {

TEST(TransferChannels, OneChannelPerBoundaryAndDirection) {
    const int m = 5;
    for (int boundary = 0; boundary < 4; ++boundary) {
        for (int mb = 0; mb < m; ++mb) {
            EXPECT_EQ(transfer_channel(transfer_tag(boundary, mb, false, m), m), boundary * 2);
            EXPECT_EQ(transfer_channel(transfer_tag(boundary, mb, true, m), m), boundary * 2 + 1);
        }
    }
}

TEST(TransferChannels, EveryGeneratedScheduleReceivesInSendingOrder) {
    struct Case {
        const char* name;
        std::vector<int> stage_rank;
        int microbatches;
    };
    const std::vector<Case> cases = {{"naive", {0, 1, 2}, 1},
                                     {"gpipe", {0, 1, 2, 3}, 8},
                                     {"1f1b", {0, 1, 2, 3}, 8},
                                     {"interleaved-1f1b", {0, 1, 0, 1}, 4},
                                     {"interleaved-1f1b", {0, 1, 2, 0, 1, 2}, 6},
                                     {"zb-h1", {0, 1, 2}, 6},
                                     {"zb-h2", {0, 1, 2}, 6},
                                     {"looped-bfs", {0, 1, 0, 1}, 3},
                                     {"interleaved-zb", {0, 1, 2, 0, 1, 2}, 5},
                                     {"interleaved-zb", {0, 1, 0, 1}, 6},
                                     {"zbv", {0, 1, 1, 0}, 4},
                                     {"zbv", {0, 1, 2, 2, 1, 0}, 5},
                                     {"dualpipev", {0, 1, 1, 0}, 4},
                                     {"dualpipev", {0, 1, 2, 2, 1, 0}, 7},
                                     {"zb-auto", {0, 1, 2}, 5}};
    for (const auto& c : cases) {
        const Schedule s =
            add_communication(generate_schedule(c.name, c.stage_rank, c.microbatches));
        EXPECT_EQ(channel_order_problem(s), "") << c.name;
    }
}

TEST(TransferChannels, EndsOfEveryBoundaryBetweenTwoRanksInChannelOrder) {
    // Stages 1 and 2 share rank 1: nothing crosses their boundary.
    const Schedule s = add_communication(generate_schedule("gpipe", {0, 1, 1, 2}, 4));
    const std::vector<ChannelEnds> expected = {{0, 0, 1}, {1, 1, 0}, {4, 1, 2}, {5, 2, 1}};
    EXPECT_EQ(channel_ends(s), expected);
}

TEST(TransferChannels, EachReceiveKnowsTheNextOnItsChannel) {
    // Rank 1 holds stages 1 and 3: activations arrive for both, gradients
    // for stage 1, three channels interleaved in one action list.
    const Schedule s = add_communication(generate_schedule("interleaved-1f1b", {0, 1, 0, 1}, 4));
    const auto& actions = s.ranks[1];
    const auto next = next_receive_on_channel(actions);
    ASSERT_EQ(next.size(), actions.size());
    for (std::size_t i = 0; i < actions.size(); ++i) {
        const Action& a = actions[i];
        if (!is_recv(a.type)) {
            EXPECT_EQ(next[i], -1);
            continue;
        }
        // The next receive of the same kind and stage, and no other.
        int expected = -1;
        for (std::size_t j = i + 1; j < actions.size(); ++j) {
            if (actions[j].type == a.type && actions[j].stage == a.stage) {
                expected = static_cast<int>(j);
                break;
            }
        }
        EXPECT_EQ(next[i], expected) << i;
        if (expected >= 0) {
            EXPECT_EQ(actions[static_cast<std::size_t>(expected)].microbatch, a.microbatch + 1);
        }
    }
}

TEST(TransferChannels, AReceiverThatTakesMicroBatchesOutOfOrderIsNamed) {
    Schedule s = add_communication(generate_schedule("gpipe", {0, 1}, 2));
    // Rank 1 receives micro-batch 1's activations before micro-batch 0's.
    auto& actions = s.ranks[1];
    std::vector<std::size_t> recvs;
    for (std::size_t i = 0; i < actions.size(); ++i) {
        if (actions[i].type == ActionType::recv_forward) {
            recvs.push_back(i);
        }
    }
    ASSERT_EQ(recvs.size(), 2U);
    std::swap(actions[recvs[0]].microbatch, actions[recvs[1]].microbatch);
    EXPECT_EQ(channel_order_problem(s),
              "activations between stages 0 and 1 are received in another order than they are "
              "sent");
}

TEST(ComputeDevice, AutoAndCpuRunOnCpusWithoutGpus) {
    if (visible_gpus() > 0) {
        GTEST_SKIP() << "this machine has GPUs";
    }
    EXPECT_EQ(resolve_device_kind("auto", 2), "cpu");
    EXPECT_EQ(resolve_device_kind("cpu", 2), "cpu");
    EXPECT_EQ(rank_device("cpu", 1), torch::Device(torch::kCPU));
    EXPECT_EQ(device_name(torch::Device(torch::kCPU)), "CPU");
    EXPECT_EQ(peak_allocated_bytes(torch::Device(torch::kCPU)), 0);
}

TEST(ComputeDevice, CudaWithoutAGpuSaysWhy) {
    if (visible_gpus() > 0) {
        GTEST_SKIP() << "this machine has GPUs";
    }
    try {
        (void)resolve_device_kind("cuda", 1);
        FAIL() << "expected an error";
    } catch (const BackendError& e) {
        const std::string why = e.what();
        EXPECT_NE(why.find("--device cuda: "), std::string::npos) << why;
        EXPECT_NE(why.find(built_with_cuda() ? "no GPU is visible" : "without CUDA"),
                  std::string::npos)
            << why;
        EXPECT_NE(why.find("--device cpu"), std::string::npos) << why;
    }
    EXPECT_THROW((void)resolve_device_kind("tpu", 1), BackendError);
}

TEST(ActionClock, CpuStampsAreTheSteadyClockInOrder) {
    const auto clock = make_action_clock(torch::Device(torch::kCPU));
    for (int iteration = 0; iteration < 2; ++iteration) {
        clock->begin_iteration();
        const std::size_t a = clock->stamp();
        const std::size_t b = clock->stamp();
        EXPECT_EQ(a, 0U) << "indices restart with each iteration";
        EXPECT_EQ(b, 1U);
        const std::vector<double> times = clock->resolve();
        ASSERT_EQ(times.size(), 2U);
        EXPECT_LE(times[0], times[1]);
    }
}

}  // namespace
}  // namespace pipewright::backend
