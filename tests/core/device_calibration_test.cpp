// The device calibration file (`pipewright calibrate`): its round trip, the
// problems it is refused for, and the GEMM correction's interpolation.
#include <gtest/gtest.h>

#include <cmath>

#include "pipewright/core/device_calibration.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/gemm_correction.h"

namespace pipewright {
namespace {

DeviceCalibration two_by_two() {
    DeviceCalibration c;
    c.spec = "H100-SXM";
    c.device_kind = "cuda";
    c.device_name = "NVIDIA H100 80GB HBM3";
    c.dtype = DType::bfloat16;
    c.host = "node7";
    c.torch_version = "2.6.0";
    c.repeats = 5;
    c.launch_seconds = 4e-6;
    for (std::int64_t m : {256, 4096}) {
        for (std::int64_t n : {256, 4096}) {
            for (std::int64_t k : {256, 4096}) {
                c.gemms.push_back({m, n, k, 1e-12 * static_cast<double>(m * n * k)});
            }
        }
    }
    c.copies = {{1 << 20, 2e-6}, {1 << 30, 8e-4}};
    c.collectives = {{CollectiveKind::all_reduce, 2, 1 << 20, 20e-6},
                     {CollectiveKind::all_to_all, 8, 1 << 30, 6e-3}};
    c.collective_library = "nccl";
    return c;
}

std::string problems_of(const nlohmann::json& j) {
    try {
        (void)device_calibration_from_json(j);
    } catch (const InputError& e) {
        std::string text;
        for (const auto& d : e.diagnostics().items()) {
            text += d.path + ": " + d.message + "\n";
        }
        return text;
    }
    return "";
}

TEST(DeviceCalibration, RoundTripKeepsEveryField) {
    const DeviceCalibration c = two_by_two();
    EXPECT_EQ(device_calibration_from_json(device_calibration_to_json(c)), c);
}

TEST(DeviceCalibration, ACpuCalibrationKeepsItsMachinesCoresAndThreads) {
    DeviceCalibration c = two_by_two();
    c.spec = "cpu";
    c.device_kind = "cpu";
    c.cores = 16;
    c.threads = 4;
    const nlohmann::json j = device_calibration_to_json(c);
    EXPECT_EQ(j["machine"]["cores"], 16);
    EXPECT_EQ(j["machine"]["threads"], 4);
    EXPECT_EQ(device_calibration_from_json(j), c);
    // Files written before the cores were recorded read as "not recorded".
    nlohmann::json old = j;
    old["machine"].erase("cores");
    EXPECT_EQ(device_calibration_from_json(old).cores, 0);
    nlohmann::json wrong = j;
    wrong["machine"]["cores"] = -2;
    EXPECT_NE(problems_of(wrong).find("machine.cores"), std::string::npos) << problems_of(wrong);
}

TEST(DeviceCalibration, RefusesAGridWithAHole) {
    nlohmann::json j = device_calibration_to_json(two_by_two());
    j["gemms"].erase(3);  // m=256 n=4096 k=4096
    EXPECT_NE(problems_of(j).find("gemms: the shapes must form a grid"), std::string::npos)
        << problems_of(j);
    EXPECT_NE(problems_of(j).find("m=256 n=4096 k=4096 is missing"), std::string::npos);
}

TEST(DeviceCalibration, RefusesAShapeMeasuredTwice) {
    nlohmann::json j = device_calibration_to_json(two_by_two());
    j["gemms"].push_back(j["gemms"][0]);
    EXPECT_NE(problems_of(j).find("gemms[8]: the shape m=256 n=256 k=256 is measured twice"),
              std::string::npos)
        << problems_of(j);
}

TEST(DeviceCalibration, NamesEachBadFieldWithItsPath) {
    nlohmann::json j = device_calibration_to_json(two_by_two());
    j["gemms"][2]["seconds"] = 0;
    j["copies"][1]["bytes"] = -5;
    j["dtype"] = "int8";
    j.erase("spec");
    const std::string text = problems_of(j);
    EXPECT_NE(text.find("gemms[2].seconds"), std::string::npos) << text;
    EXPECT_NE(text.find("copies[1].bytes"), std::string::npos) << text;
    EXPECT_NE(text.find("dtype: must be"), std::string::npos) << text;
    EXPECT_NE(text.find("spec: missing"), std::string::npos) << text;
}

TEST(DeviceCalibration, CollectivesAreOptionalAndCheckedFieldByField) {
    nlohmann::json j = device_calibration_to_json(two_by_two());
    nlohmann::json older = j;
    older.erase("collectives");
    older.erase("collective_library");
    EXPECT_TRUE(device_calibration_from_json(older).collectives.empty());

    j["collectives"][0]["kind"] = "broadcast";
    j["collectives"][1]["members"] = 1;
    j["collectives"].push_back(j["collectives"][1]);
    j["collectives"][2]["members"] = 8;
    j["collectives"].push_back(j["collectives"][2]);
    j["collective_library"] = "mpi";
    const std::string text = problems_of(j);
    EXPECT_NE(text.find("collectives[0].kind: must be"), std::string::npos) << text;
    EXPECT_NE(text.find("collectives[1].members"), std::string::npos) << text;
    EXPECT_NE(text.find("collectives[3]: the all-to-all of 1073741824 bytes among 8 members is "
                        "measured twice"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("collective_library: must be"), std::string::npos) << text;
}

TEST(DeviceCalibration, EveryCollectiveKindIsReadAsItIsWritten) {
    DeviceCalibration c = two_by_two();
    c.collectives.clear();
    for (const CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter,
                                      CollectiveKind::all_gather, CollectiveKind::all_to_all}) {
        c.collectives.push_back({kind, 4, 1 << 20, 1e-4});
    }
    const nlohmann::json j = device_calibration_to_json(c);
    EXPECT_EQ(j["collectives"][1]["kind"], "reduce-scatter");
    EXPECT_EQ(device_calibration_from_json(j), c);
}

TEST(DeviceCalibration, RefusesAnotherKindOfFile) {
    nlohmann::json j = device_calibration_to_json(two_by_two());
    j["format"] = "pipewright-profile";
    EXPECT_NE(problems_of(j).find("format"), std::string::npos);
}

GemmCorrection grid_of_ratios() {
    GemmCorrection g;
    g.m = {100, 10000};
    g.n = {100};
    g.k = {100};
    g.log_ratio = {std::log(1.0), std::log(4.0)};
    return g;
}

TEST(GemmCorrection, IsExactAtGridPoints) {
    const GemmCorrection g = grid_of_ratios();
    EXPECT_DOUBLE_EQ(g.ratio(100, 100, 100), 1.0);
    EXPECT_DOUBLE_EQ(g.ratio(10000, 100, 100), 4.0);
}

TEST(GemmCorrection, InterpolatesInLogSpaceBetweenPoints) {
    // m = 1000 lies halfway between 100 and 10000 in log m: the ratio is
    // the geometric mean of 1 and 4.
    EXPECT_NEAR(grid_of_ratios().ratio(1000, 100, 100), 2.0, 1e-12);
}

TEST(GemmCorrection, HoldsTheEdgeBeyondTheGrid) {
    const GemmCorrection g = grid_of_ratios();
    EXPECT_DOUBLE_EQ(g.ratio(10, 5, 1e6), 1.0);
    EXPECT_DOUBLE_EQ(g.ratio(1e6, 1e6, 1), 4.0);
}

TEST(GemmCorrection, AnEmptyGridCorrectsNothing) {
    EXPECT_DOUBLE_EQ(GemmCorrection{}.ratio(512, 512, 512), 1.0);
}

}  // namespace
}  // namespace pipewright
