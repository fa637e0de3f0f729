#include "pipewright/core/schedule_csv.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/schedule_check.h"
#include "pipewright/core/schedule_generators.h"
#include "schedule_test_support.h"

namespace pipewright {
namespace {

using testing::placement_for;
using testing::straight;

// The diagnostics of the InputError that parsing `text` throws.
Diagnostics csv_error(const std::string& text) {
    try {
        (void)schedule_from_csv(text);
    } catch (const InputError& e) {
        return e.diagnostics();
    }
    ADD_FAILURE() << "no InputError for:\n" << text;
    return {};
}

TEST(ScheduleCsv, WritesOneRowPerRank) {
    const Schedule s = add_communication(generate_schedule("gpipe", {0, 1}, 1));
    EXPECT_EQ(schedule_to_csv(s),
              "0F0,0SEND_F0,0RECV_B0,0B0\n"
              "1RECV_F0,1F0,1B0,1SEND_B0\n");
}

TEST(ScheduleCsv, ReadsRowsAndDerivesPlacement) {
    const Schedule s = schedule_from_csv("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n", "mine");
    EXPECT_EQ(s.name, "mine");
    EXPECT_EQ(s.num_stages, 2);
    EXPECT_EQ(s.num_microbatches, 2);
    EXPECT_EQ(s.stage_rank, (std::vector<int>{0, 1}));
    ASSERT_EQ(s.ranks.size(), 2U);
    EXPECT_EQ(s.ranks[1][2], (Action{1, ActionType::forward, 1}));
    EXPECT_EQ(schedule_from_csv("0F0,0B0\n").name, "csv");
}

TEST(ScheduleCsv, RoundTripsEveryGenerator) {
    for (const auto& info : schedule_catalog()) {
        for (const int p : {1, 2, 4}) {
            const Schedule compute = generate_schedule(info.name, placement_for(info, p),
                                                       info.microbatching ? 2 * p : 1);
            for (const Schedule& s : {compute, add_communication(compute)}) {
                const Schedule back = schedule_from_csv(schedule_to_csv(s), s.name);
                EXPECT_EQ(back, s) << info.name << " p=" << p << "\n" << schedule_to_csv(s);
            }
        }
    }
}

TEST(ScheduleCsv, ToleratesSpreadsheetFormatting) {
    const Schedule s = schedule_from_csv(
        " 0F0 , ,0F1,\"0B0\",0B1,,\r\n"
        "1F0,1B0,,1F1,1B1,\r\n"
        "\r\n"
        "\n");
    ASSERT_EQ(s.ranks.size(), 2U);
    EXPECT_EQ(s.ranks[0].size(), 4U);
    EXPECT_EQ(s.ranks[1].size(), 4U);
    EXPECT_EQ(s.ranks[0][2], (Action{0, ActionType::backward, 0}));
    EXPECT_TRUE(check_schedule(s).empty()) << check_schedule(s).format();
}

TEST(ScheduleCsv, BlankRowBetweenRowsIsAnIdleRank) {
    const Schedule s = schedule_from_csv("0F0,0B0\n\n2F0,2B0\n1F0,1B0\n");
    ASSERT_EQ(s.ranks.size(), 4U);
    EXPECT_TRUE(s.ranks[1].empty());
    EXPECT_EQ(s.stage_rank, (std::vector<int>{0, 3, 2}));
}

TEST(ScheduleCsv, MalformedCellsNameRowAndColumn) {
    const Diagnostics d = csv_error("0F0,0B0\n1F0,2X0,1B0\n2F0,,2B0, nope\n");
    ASSERT_EQ(d.size(), 2U) << d.format();
    EXPECT_EQ(d.items()[0].path, "row 2, column 2");
    EXPECT_EQ(d.items()[0].message, "\"2X0\" is not an action; expected e.g. 2F0, 1B3, 0SEND_F1");
    EXPECT_EQ(d.items()[1].path, "row 3, column 4");
    EXPECT_NE(d.items()[1].message.find("\"nope\""), std::string::npos);
}

// A cell of megabytes is not echoed in full: its start, its size and where
// it is say enough.
TEST(ScheduleCsv, AHugeCellIsShownCut) {
    const Diagnostics d = csv_error("0F0," + std::string(10'000'000, 'x') + "\n");
    ASSERT_EQ(d.size(), 1U);
    EXPECT_EQ(d.items()[0].path, "row 1, column 2");
    EXPECT_LT(d.items()[0].message.size(), 200U);
    EXPECT_NE(d.items()[0].message.find("(10000000 characters) is not an action"),
              std::string::npos)
        << d.items()[0].message;
}

TEST(ScheduleCsv, DataParallelCollectivesRoundTripInPyTorchNotation) {
    const std::string text = "0UNSHARD,0F0,0B0,0RESHARD,0REDUCE_GRAD\n";
    const Schedule s = schedule_from_csv(text);
    ASSERT_EQ(s.ranks.size(), 1U);
    EXPECT_EQ(s.ranks[0][0], (Action{0, ActionType::unshard, 0}));
    EXPECT_EQ(s.ranks[0][4], (Action{0, ActionType::reduce_grad, 0}));
    EXPECT_TRUE(s.has_collectives());
    EXPECT_EQ(schedule_to_csv(s), text);
    EXPECT_TRUE(check_schedule(s).empty()) << check_schedule(s).format();
}

TEST(ScheduleCsv, ACollectiveWithAMicroBatchIsMalformed) {
    const Diagnostics d = csv_error("0F0,0B0,0REDUCE_GRAD0\n");
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "row 1, column 3");
}

TEST(ScheduleCsv, StageOnTwoRanks) {
    const Diagnostics d = csv_error("0F0,1F0,1B0,0B0\n1F1,1B1\n");
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_EQ(d.items()[0].path, "row 2, column 1");
    EXPECT_NE(d.items()[0].message.find("stage 1"), std::string::npos) << d.format();
    EXPECT_NE(d.items()[0].message.find("row 1, column 2"), std::string::npos) << d.format();
}

TEST(ScheduleCsv, StageWithoutComputeIsRejected) {
    const Diagnostics d = csv_error("0F0,0B0\n2F0,2B0,1SEND_F0\n");
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_NE(d.items()[0].message.find("stage 1 has no forward or backward"), std::string::npos)
        << d.format();
}

TEST(ScheduleCsv, HugeStageIndexIsAGapNotAnAllocation) {
    const Diagnostics d = csv_error("0F0,0B0\n99999999F0,99999999B0\n");
    ASSERT_EQ(d.size(), 1U) << d.format();
    EXPECT_NE(d.items()[0].message.find("stages 1 to 99999998 have no forward or backward"),
              std::string::npos)
        << d.format();
    // Past kMaxActionIndex the cell is malformed (index + 1 must fit an int).
    const Diagnostics too_big = csv_error("0F0,0B0\n2147483647F0\n");
    ASSERT_GE(too_big.size(), 1U);
    EXPECT_NE(too_big.items()[0].message.find("is not an action"), std::string::npos)
        << too_big.format();
    // Stages named only by communication have no rank either.
    const Diagnostics dc = csv_error("0F0,0B0,0SEND_F0\n1RECV_F0,5RECV_F0\n");
    ASSERT_EQ(dc.size(), 1U) << dc.format();
    EXPECT_NE(dc.items()[0].message.find("stages 1 to 5 have"), std::string::npos) << dc.format();
}

TEST(ScheduleCsv, EmptyTextIsRejected) {
    EXPECT_NE(csv_error("").format().find("no actions"), std::string::npos);
    EXPECT_NE(csv_error("\n , ,\n\n").format().find("no actions"), std::string::npos);
}

TEST(ScheduleCsv, MicrobatchCountIsLargestIndexPlusOne) {
    const Schedule s = schedule_from_csv("0F3,0B3\n");
    EXPECT_EQ(s.num_microbatches, 4);
    // Micro-batches 0 to 2 never run, which the checker reports.
    EXPECT_FALSE(check_schedule(s).empty());
}

class ScheduleCsvFile : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = std::filesystem::temp_directory_path() /
               (std::string("pipewright_schedule_csv_") + info->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::filesystem::path write(const std::string& file, const std::string& text) {
        const auto path = dir_ / file;
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }

    std::filesystem::path dir_;
};

TEST_F(ScheduleCsvFile, LoadsAndNamesAfterTheFile) {
    const Schedule compute = generate_schedule("zb-h1", straight(3), 3);
    const Schedule lowered = add_communication(compute);
    const auto path = write("zb.csv", schedule_to_csv(lowered));
    Schedule loaded = load_schedule_csv(path);
    EXPECT_EQ(loaded.name, "zb");
    loaded.name = lowered.name;
    EXPECT_EQ(loaded, lowered);
}

TEST_F(ScheduleCsvFile, MissingFileIsNamed) {
    const auto path = dir_ / "absent.csv";
    try {
        (void)load_schedule_csv(path);
        FAIL() << "no InputError";
    } catch (const InputError& e) {
        ASSERT_EQ(e.diagnostics().size(), 1U);
        EXPECT_EQ(e.diagnostics().items()[0].path, path.string());
        EXPECT_NE(std::string(e.what()).find("absent.csv"), std::string::npos);
    }
}

TEST_F(ScheduleCsvFile, ErrorsNameFileRowAndColumn) {
    const auto path = write("bad.csv", "0F0,0B0\n1F0,1Q0\n");
    try {
        (void)load_schedule_csv(path);
        FAIL() << "no InputError";
    } catch (const InputError& e) {
        ASSERT_EQ(e.diagnostics().size(), 1U);
        EXPECT_EQ(e.diagnostics().items()[0].path, path.string() + ", row 2, column 2");
    }
}

}  // namespace
}  // namespace pipewright
