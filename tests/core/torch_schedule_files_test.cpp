// The CSV files torch.distributed.pipelining writes for looped BFS,
// interleaved zero bubble, ZB-V and DualPipeV (torch_schedules/, made by make_fixtures.py with
// torch 2.15): the compute-only lists are the ones Pipewright generates, and
// torch's own lowering (sends and receives placed as its runtime places
// them) reads as a valid schedule with the same computations. Pipewright
// writes both forms as torch writes them (schedule_to_torch_csv), with
// torch 2.15's runtime lowering (REDUCE_GRAD, UNSHARD/RESHARD, the WAIT_
// cells) round-tripping.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/torch_csv.h"

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
        // Looped (stage s on rank s mod p), or a V for ZB-V and DualPipeV.
        const bool v_shape = std::string(schedule) == "zbv" || std::string(schedule) == "dualpipev";
        std::vector<int> stage_rank;
        for (int s = 0; s < ranks * stages_per_rank; ++s) {
            stage_rank.push_back(!v_shape ? s % ranks : s < ranks ? s : 2 * ranks - 1 - s);
        }
        return generate_schedule(schedule, stage_rank, microbatches);
    }
};

// A CSV's rows with their empty cells (torch's idle steps) and line ends
// dropped, so that files compare by content: torch's csv module ends rows
// with CRLF.
// With `computations_and_transfers`, only those: the cells of torch's
// _add_send_recv before its runtime adds REDUCE_GRAD and the WAIT_ cells.
std::vector<std::string> rows_of(const std::string& text, bool computations_and_transfers = false) {
    std::vector<std::string> rows;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream cells(line);
        std::string row;
        for (std::string cell; std::getline(cells, cell, ',');) {
            if (!cell.empty() && cell.back() == '\r') {
                cell.pop_back();
            }
            const bool runtime_only = cell.find("WAIT_") != std::string::npos ||
                                      cell.find("REDUCE_GRAD") != std::string::npos;
            if (cell.empty() || (computations_and_transfers && runtime_only)) {
                continue;
            }
            row += (row.empty() ? "" : ",") + cell;
        }
        rows.push_back(row);
    }
    return rows;
}

std::string file_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

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
    {"dualpipev", 2, 2, 4},
    {"dualpipev", 3, 2, 7},
    {"dualpipev", 4, 2, 10},
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

TEST(TorchScheduleFiles, ComputeOnlyIsWrittenAsTorchWritesIt) {
    for (const TorchFile& f : kFiles) {
        SCOPED_TRACE(f.stem());
        const Schedule lowered = add_communication(f.generated());
        EXPECT_EQ(rows_of(schedule_to_torch_csv(lowered, TorchCsvFormat::compute_only)),
                  rows_of(file_text(fixtures() / (f.stem() + ".csv"))));
    }
}

TEST(TorchScheduleFiles, SendsAndReceivesArePlacedAsTorchPlacesThem) {
    for (const TorchFile& f : kFiles) {
        SCOPED_TRACE(f.stem());
        // From Pipewright's own lowering: its sends and receives are dropped
        // and placed again, with REDUCE_GRAD and the WAIT_ cells as torch's
        // runtime adds them (-ddp files); the -comms files hold the work of
        // _add_send_recv alone, which takes the same transfers in a
        // different order without the reductions' turns.
        const Schedule lowered = add_communication(f.generated());
        const std::string written = schedule_to_torch_csv(lowered, TorchCsvFormat::compute_comms);
        EXPECT_EQ(rows_of(written), rows_of(file_text(fixtures() / (f.stem() + "-ddp.csv"))));
        const auto transfers = [](const std::string& text) {
            std::vector<std::vector<Action>> out;
            for (const auto& row : schedule_from_csv(text).ranks) {
                std::vector<std::string> cells;
                for (const Action& a : row) {
                    if (is_send(a.type) || is_recv(a.type)) {
                        cells.push_back(to_string(a));
                    }
                }
                std::sort(cells.begin(), cells.end());
                out.emplace_back();
                for (const auto& c : cells) {
                    out.back().push_back(*parse_action(c));
                }
            }
            return out;
        };
        EXPECT_EQ(transfers(written), transfers(file_text(fixtures() / (f.stem() + "-comms.csv"))));
    }
}

// Lowered by torch 2.15 as _PipelineScheduleRuntime lowers a compute-only
// list (make_fixtures.py, RUNTIME_CASES).
const std::vector<TorchFile> kRuntimeFiles = {
    {"1f1b", 4, 1, 6},
    {"interleaved-zb", 2, 2, 4},
    {"zbv", 4, 2, 8},
    {"dualpipev", 4, 2, 10},
};

TEST(TorchScheduleFiles, ScheduleIsWrittenAsTorchsRuntimeLowersIt) {
    for (const TorchFile& f : kRuntimeFiles) {
        SCOPED_TRACE(f.stem());
        const std::vector<std::string> torch_rows =
            rows_of(file_text(fixtures() / (f.stem() + "-ddp.csv")));
        // With data parallelism, REDUCE_GRAD right after each stage's last
        // backward is where torch's _add_reduce_grad places it.
        const Schedule ddp =
            add_collectives(add_communication(f.generated()),
                            {.shard_parameters = false, .overlap_gradient_sync = true});
        EXPECT_EQ(rows_of(schedule_to_torch_csv(ddp, TorchCsvFormat::compute_comms)), torch_rows);
        // Without, the writer adds them there: torch scales the gradients at
        // REDUCE_GRAD.
        EXPECT_EQ(rows_of(schedule_to_torch_csv(add_communication(f.generated()),
                                                TorchCsvFormat::compute_comms)),
                  torch_rows);
    }
}

TEST(TorchScheduleFiles, RuntimeFilesWithCollectivesAndWaitsRoundTrip) {
    for (const TorchFile& f : kRuntimeFiles) {
        for (const char* suffix : {"-ddp.csv", "-runtime.csv"}) {
            SCOPED_TRACE(f.stem() + suffix);
            const fs::path path = fixtures() / (f.stem() + suffix);
            const Schedule read = load_schedule_csv(path);
            const Diagnostics problems = check_schedule(read);
            EXPECT_TRUE(problems.empty()) << problems.format();
            EXPECT_TRUE(read.has_collectives());
            const Schedule ours = f.generated();
            for (std::size_t r = 0; r < ours.ranks.size(); ++r) {
                EXPECT_EQ(computations(read.ranks[r]), ours.ranks[r]) << "rank " << r;
            }
            EXPECT_EQ(rows_of(schedule_to_torch_csv(read, TorchCsvFormat::compute_comms)),
                      rows_of(file_text(path)));
            EXPECT_EQ(rows_of(schedule_to_torch_csv(read, TorchCsvFormat::compute_only)),
                      rows_of(schedule_to_torch_csv(ours, TorchCsvFormat::compute_only)));
        }
    }
}

TEST(TorchScheduleFiles, ReceivesWaitWhereTheirDataIsUsed) {
    // Rank 1 posts both receives first, as torch does; the backward's
    // receive moves to right before 1B0, the forward's stays before 1F0.
    // One placed after its use is left for the checker to report.
    const Schedule s = schedule_from_csv(
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0B1,0RECV_B1\n"
        "1RECV_F0,1RECV_F1,1F0,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n");
    const Schedule moved = with_receives_where_used(s);
    EXPECT_EQ(schedule_to_csv(moved),
              "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0B1,0RECV_B1\n"
              "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1\n");
    EXPECT_FALSE(check_schedule(moved).empty());
    // Torch's lowering of every fixture becomes a schedule that still runs,
    // with each receive right before its use.
    for (const TorchFile& f : kFiles) {
        SCOPED_TRACE(f.stem());
        const Schedule lowered =
            with_receives_where_used(load_schedule_csv(fixtures() / (f.stem() + "-comms.csv")));
        EXPECT_TRUE(check_schedule(lowered).empty()) << check_schedule(lowered).format();
        for (const auto& row : lowered.ranks) {
            for (std::size_t i = 0; i + 1 < row.size(); ++i) {
                if (is_recv(row[i].type)) {
                    EXPECT_TRUE(is_compute(row[i + 1].type) || is_recv(row[i + 1].type))
                        << to_string(row[i]) << " is followed by " << to_string(row[i + 1]);
                }
            }
        }
    }
}

TEST(TorchScheduleFiles, WaitCellsAreReadAndDropped) {
    const Schedule s = schedule_from_csv(
        "0F0,0SEND_F0,0RECV_B0,0B0,0WAIT_SEND_F0,0REDUCE_GRAD,0WAIT_REDUCE_GRAD\n"
        "1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD,1WAIT_REDUCE_GRAD,1WAIT_SEND_B0\n");
    EXPECT_TRUE(check_schedule(s).empty()) << check_schedule(s).format();
    EXPECT_EQ(s.action_count(), 10U);
}

TEST(TorchScheduleFiles, OverlappedPairsRoundTrip) {
    // Two stages on one rank, a forward overlapped with the other stage's
    // backward, as DualPipeV writes it.
    const Schedule read = schedule_from_csv("0F0,1F0,(0F1;1B0)OVERLAP_F_B,1F1,1B1,0B0,0B1\n");
    ASSERT_EQ(read.ranks.size(), 1U);
    ASSERT_EQ(read.ranks[0].size(), 8U);
    EXPECT_TRUE(read.ranks[0][2].overlaps_next);
    EXPECT_EQ(read.ranks[0][3], (Action{1, ActionType::backward, 0}));
    EXPECT_EQ(schedule_to_csv(read), "0F0,1F0,(0F1;1B0)OVERLAP_F_B,1F1,1B1,0B0,0B1\n");
    EXPECT_TRUE(check_schedule(read).empty()) << check_schedule(read).format();
    // The flag is part of the list: without it the schedules differ.
    Schedule plain = read;
    plain.ranks[0][2].overlaps_next = false;
    EXPECT_NE(plain, read);
}

TEST(TorchScheduleFiles, AMalformedOverlappedPairIsExplained) {
    for (const char* cell :
         {"(0F1;1F0)OVERLAP_F_B", "(0F1)OVERLAP_F_B", "(0B1;1F0)OVERLAP_F_B", "(0F1;1B0)OVERLAP"}) {
        SCOPED_TRACE(cell);
        try {
            (void)schedule_from_csv(std::string("0F0,") + cell + "\n");
            FAIL() << "expected an InputError";
        } catch (const InputError& e) {
            const std::string text = e.what();
            EXPECT_NE(text.find("row 1, column 2"), std::string::npos) << text;
            EXPECT_NE(text.find("(0F3;5B1)OVERLAP_F_B"), std::string::npos) << text;
        }
    }
}

TEST(TorchScheduleFiles, FormatsAreNamedAsTorchNamesThem) {
    for (const TorchCsvFormat f : {TorchCsvFormat::compute_only, TorchCsvFormat::compute_comms}) {
        EXPECT_EQ(torch_csv_format(to_string(f)), f);
    }
    EXPECT_FALSE(torch_csv_format("compute_only").has_value());
}

TEST(TorchScheduleFiles, AScheduleThatCannotRunCannotBeLowered) {
    // Rank 1 needs stage 0's backward before stage 0 can run it.
    Schedule s;
    s.num_stages = 2;
    s.num_microbatches = 1;
    s.stage_rank = {0, 1};
    s.ranks = {{{0, ActionType::backward, 0}, {0, ActionType::forward, 0}},
               {{1, ActionType::forward, 0}, {1, ActionType::backward, 0}}};
    try {
        (void)schedule_to_torch_csv(s, TorchCsvFormat::compute_comms);
        FAIL() << "expected a ScheduleError";
    } catch (const ScheduleError& e) {
        EXPECT_NE(std::string(e.what()).find("rank 0 at 0B0"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("rank 1 at 1F0"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace pipewright
