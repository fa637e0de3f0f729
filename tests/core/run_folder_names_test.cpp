// A run folder's name and which of its files a run wrote: the one answer
// the backend and the studio share.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "pipewright/core/run_folder_names.h"

namespace pipewright {
namespace {

TEST(RunFolderNames, AStemIsTheSafeModelNameAndTheStartTime) {
    std::tm local{};
    local.tm_year = 2026 - 1900;
    local.tm_mon = 11;
    local.tm_mday = 5;
    local.tm_hour = 9;
    local.tm_min = 7;
    local.tm_sec = 3;
    EXPECT_EQ(run_folder_stem("gpt-tiny", local), "gpt-tiny-20261205-090703");
    // A name cannot steer the folder elsewhere.
    EXPECT_EQ(run_folder_stem("../x", local).find('/'), std::string::npos);
}

TEST(RunFolderNames, ATakenNameGetsTheNextNumber) {
    const std::set<std::string> taken{"m-1", "m-1-2"};
    const auto is_taken = [&](const std::string& n) { return taken.contains(n); };
    EXPECT_EQ(first_free_run_folder("m-0", is_taken), "m-0");
    EXPECT_EQ(first_free_run_folder("m-1", is_taken), "m-1-3");
}

TEST(RunFolderNames, TheParameterFilesAreNamedAsTheyAreRecognised) {
    EXPECT_EQ(params_file_name(0), "params-stage-0.pt");
    EXPECT_EQ(params_file_name(2, 0, 1), "params-stage-2-tensor-1.pt");
    EXPECT_EQ(params_file_name(1, 3, 1), "params-stage-1-replica-3-tensor-1.pt");
    for (const auto& [replica, member] : {std::pair{0, 0}, {1, 0}, {0, 2}, {4, 3}}) {
        EXPECT_TRUE(is_run_output(params_file_name(5, replica, member)));
    }
}

TEST(RunFolderNames, EveryFileARunWritesIsItsOutputAndNothingElse) {
    for (const char* name : {"run.log", "metrics.json", "summary.json", "timeline.json",
                             "trace.json", "rank-3.json", "rank-12.log", "params-stage-0.pt",
                             "params-stage-2-tensor-1.pt", "params-stage-1-replica-3.pt",
                             "params-stage-1-replica-3-tensor-1.pt", ".metrics.json.123.4.tmp"}) {
        EXPECT_TRUE(is_run_output(name)) << name;
    }
    for (const char* name : {"project.json", "notes.txt", "rank-.json", "params-stage-x.pt",
                             "run.log.bak", "metrics.json.tmp"}) {
        EXPECT_FALSE(is_run_output(name)) << name;
    }
}

}  // namespace
}  // namespace pipewright
