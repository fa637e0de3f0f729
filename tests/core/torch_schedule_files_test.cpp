// The CSV files torch.distributed.pipelining writes for looped BFS,
// interleaved zero bubble and ZB-V (torch_schedules/, made by make_fixtures.py with
// torch 2.15): the compute-only lists are the ones Pipewright generates, and
// torch's own lowering (sends and receives placed as its runtime places
// them) reads as a valid schedule with the same computations.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

fs::path fixtures() {
    return fs::path(PIPEWRIGHT_ASSETS_DIR).parent_path() / "tests" / "core" / "torch_schedules";
}

struct TorchFile {
    const char* schedule;
    int ranks;
    int stages_per_rank;
    int microbatches;

    [[nodiscard]] std::string stem() const {
        return std::string(schedule) + "-p" + std::to_string(ranks) + "-v" +
               std::to_string(stages_per_rank) + "-m" + std::to_string(microbatches);
    }
    [[nodiscard]] Schedule generated() const {
        // Looped (stage s on rank s mod p), or a V for ZB-V.
        const bool v_shape = std::string(schedule) == "zbv";
        std::vector<int> stage_rank;
        for (int s = 0; s < ranks * stages_per_rank; ++s) {
            stage_rank.push_back(!v_shape ? s % ranks : s < ranks ? s : 2 * ranks - 1 - s);
        }
        return generate_schedule(schedule, stage_rank, microbatches);
    }
};

const std::vector<TorchFile> kFiles = {
    {"looped-bfs", 2, 2, 3},
    {"looped-bfs", 4, 3, 5},
    {"interleaved-zb", 2, 2, 4},
    {"interleaved-zb", 3, 2, 5},
    {"interleaved-zb", 4, 2, 8},
    {"interleaved-zb", 4, 3, 12},
    {"zbv", 2, 2, 4},
    {"zbv", 4, 2, 8},
    {"zbv", 4, 2, 5},
};

std::vector<Action> computations(const std::vector<Action>& actions) {
    std::vector<Action> out;
    for (const Action& a : actions) {
        if (is_compute(a.type)) {
            out.push_back(a);
        }
    }
    return out;
}

TEST(TorchScheduleFiles, ComputeOnlyListsAreTheGeneratedOnes) {
    for (const TorchFile& f : kFiles) {
        SCOPED_TRACE(f.stem());
        Schedule from_torch = load_schedule_csv(fixtures() / (f.stem() + ".csv"));
        const Schedule ours = f.generated();
        from_torch.name = ours.name;
        EXPECT_EQ(from_torch, ours);
    }
}

TEST(TorchScheduleFiles, TorchLoweringReadsAsAValidScheduleWithTheSameComputations) {
    for (const TorchFile& f : kFiles) {
        SCOPED_TRACE(f.stem());
        const Schedule lowered = load_schedule_csv(fixtures() / (f.stem() + "-comms.csv"));
        const Diagnostics problems = check_schedule(lowered);
        EXPECT_TRUE(problems.empty()) << problems.format();
        EXPECT_TRUE(lowered.has_communication());
        const Schedule ours = f.generated();
        ASSERT_EQ(lowered.ranks.size(), ours.ranks.size());
        for (std::size_t r = 0; r < ours.ranks.size(); ++r) {
            EXPECT_EQ(computations(lowered.ranks[r]), ours.ranks[r]) << "rank " << r;
        }
        // As many transfers as Pipewright's own lowering, placed differently.
        EXPECT_EQ(lowered.action_count(), add_communication(ours).action_count());
    }
}

}  // namespace
}  // namespace pipewright
