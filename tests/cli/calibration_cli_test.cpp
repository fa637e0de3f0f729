// `simulate --calibration` and `plan --calibration`: a device calibration
// changes what the device's kernels cost, says so, and a bad file is refused
// naming the file and the field.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "../cpu_calibration_fixture.h"
#include "cli_test_support.h"
#include "pipewright/core/device_calibration.h"

namespace pipewright {
namespace {

using testing::example;
using testing::run_cli;
using testing::TempDir;

// GEMMs `seconds_per_flop` each FLOP, on a grid around the 8B model's shapes.
std::string write_calibration(const TempDir& dir, const std::string& name, double seconds_per_flop,
                              const std::string& spec = "H100-SXM") {
    DeviceCalibration c;
    c.spec = spec;
    c.device_name = "NVIDIA H100 80GB HBM3";
    c.dtype = DType::bfloat16;
    c.launch_seconds = 5e-6;
    for (std::int64_t m : {1024, 16384}) {
        for (std::int64_t n : {1024, 16384}) {
            for (std::int64_t k : {1024, 16384}) {
                c.gemms.push_back(
                    {m, n, k, 2.0 * static_cast<double>(m * n * k) * seconds_per_flop});
            }
        }
    }
    c.copies = {{1 << 30, 1e-3}};
    const auto path = (dir / name).string();
    std::ofstream(path) << device_calibration_to_json(c).dump(1);
    return path;
}

double iteration(const testing::CliResult& r) {
    return nlohmann::json::parse(r.out).at("iteration_time_s").get<double>();
}

TEST(CalibrationCli, SlowerMeasuredGemmsMakeASlowerIteration) {
    TempDir dir;
    const std::string project = example("llama3.1-8b-h100-node.json");
    // 400 and 200 TFLOP/s.
    const auto fast = write_calibration(dir, "fast.json", 1 / 400e12);
    const auto slow = write_calibration(dir, "slow.json", 1 / 200e12);
    const auto plain = run_cli({"simulate", project, "--json"});
    const auto a = run_cli({"simulate", project, "--json", "--calibration", fast});
    const auto b = run_cli({"simulate", project, "--json", "--calibration", slow});
    ASSERT_EQ(a.code, 0) << a.err;
    ASSERT_EQ(b.code, 0) << b.err;
    EXPECT_GT(iteration(b), 1.5 * iteration(a));
    EXPECT_NE(iteration(a), iteration(plain));

    const auto text = run_cli({"simulate", project, "--calibration", slow});
    EXPECT_NE(text.out.find("Costs       H100-SXM kernels as measured on NVIDIA H100 80GB HBM3 (" +
                            slow + "): launch 5.00 µs"),
              std::string::npos)
        << text.out;
}

TEST(CalibrationCli, PlanPricesItsLayoutsWithTheCalibration) {
    TempDir dir;
    const std::string project = example("llama3.1-8b-h100-node.json");
    const auto slow = write_calibration(dir, "slow.json", 1 / 200e12);
    const auto plain = run_cli({"plan", project, "--json"});
    const auto calibrated = run_cli({"plan", project, "--json", "--calibration", slow});
    ASSERT_EQ(plain.code, 0) << plain.err;
    ASSERT_EQ(calibrated.code, 0) << calibrated.err;
    const auto estimate = [](const testing::CliResult& r) {
        return nlohmann::json::parse(r.out).at("iteration_time_s").get<double>();
    };
    EXPECT_GT(estimate(calibrated), estimate(plain));
}

TEST(CalibrationCli, ABadCalibrationIsRefusedNamingTheFileAndTheField) {
    TempDir dir;
    const auto path = write_calibration(dir, "c.json", 1 / 400e12);
    nlohmann::json j = nlohmann::json::parse(std::ifstream(path));
    j["gemms"][0]["seconds"] = -1;
    std::ofstream(path) << j.dump();
    const auto r =
        run_cli({"simulate", example("llama3.1-8b-h100-node.json"), "--calibration", path});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gemms[0].seconds"), std::string::npos) << r.err;
}

TEST(CalibrationCli, RefusesAnUnknownDeviceAndTwoCalibrationsOfOne) {
    TempDir dir;
    const std::string project = example("llama3.1-8b-h100-node.json");
    const auto unknown = write_calibration(dir, "u.json", 1 / 400e12, "Z9000");
    auto r = run_cli({"simulate", project, "--calibration", unknown});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("\"Z9000\" is not a device of the catalog"), std::string::npos) << r.err;

    const auto a = write_calibration(dir, "a.json", 1 / 400e12);
    const auto b = write_calibration(dir, "b.json", 1 / 300e12);
    r = run_cli({"simulate", project, "--calibration", a, "--calibration", b});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("both calibrate H100-SXM"), std::string::npos) << r.err;
}

// ResNet-50's two replicas on one container of A100s reduce as the
// calibration measured them among that machine's GPUs.
TEST(CalibrationCli, MeasuredCollectivesPriceTheReplicasReductions) {
    TempDir dir;
    DeviceCalibration c;
    c.spec = "A100-40GB";
    c.dtype = DType::bfloat16;
    c.launch_seconds = 5e-6;
    c.gemms = {{1024, 1024, 1024, 2e-5}};
    c.copies = {{1 << 30, 1.4e-3}};
    for (const CollectiveKind kind : {CollectiveKind::reduce_scatter, CollectiveKind::all_gather}) {
        c.collectives.push_back({kind, 2, 1 << 20, 1e-4});
        c.collectives.push_back({kind, 2, std::int64_t{1} << 30, 0.2});
    }
    c.collective_library = "nccl";
    const auto path = (dir / "a100.json").string();
    std::ofstream(path) << device_calibration_to_json(c).dump(1);
    const std::string project = example("resnet50-4gpu-2x2.json");

    const auto text = run_cli({"simulate", project, "--calibration", path});
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("measured reduce-scatter"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("(NCCL Simple)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("NCCL collectives of up to 2 A100-40GB GPUs"), std::string::npos)
        << text.out;
    // 0.2 s a GiB: far slower than NVLink, so the iteration grows.
    const auto plain = run_cli({"simulate", project, "--json"});
    const auto calibrated = run_cli({"simulate", project, "--json", "--calibration", path});
    ASSERT_EQ(calibrated.code, 0) << calibrated.err;
    const auto j = nlohmann::json::parse(calibrated.out);
    EXPECT_EQ(j.at("data_parallel").at("collectives").at(0).at("algorithm"), "measured");
    EXPECT_GT(iteration(calibrated), iteration(plain));
}

TEST(CalibrationCli, AnOutputMayNotReplaceTheCalibration) {
    TempDir dir;
    const auto path = write_calibration(dir, "c.json", 1 / 400e12);
    const auto r = run_cli({"simulate", example("llama3.1-8b-h100-node.json"), "--calibration",
                            path, "--trace", path});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(device_calibration_from_json(nlohmann::json::parse(std::ifstream(path))).gemms.size(),
              8u);
}

}  // namespace
}  // namespace pipewright

namespace pipewright {
namespace {

// A CPU calibration of 2 cores and the small Mixtral's 4 ranks: simulate and
// plan say that the ranks take turns, and with 64 cores neither does.
TEST(CalibrationCli, CpuRanksThatOutnumberTheCalibratedCoresAreWarnedAbout) {
    testing::TempDir dir;
    const auto write = [&](const std::string& name, int cores) {
        const auto path = (dir / name).string();
        std::ofstream(path) << device_calibration_to_json(cpu_calibration(cores, 1)).dump(1);
        return path;
    };
    const std::string project = testing::example("mixtral-tiny-e2-cpu.json");
    const std::string turns =
        "the calibration was measured on a machine of 2 cores, and this layout runs 4 CPU ranks";
    const auto two = write("two.json", 2);
    const auto simulated = testing::run_cli({"simulate", project, "--calibration", two});
    ASSERT_EQ(simulated.code, 0) << simulated.err;
    EXPECT_NE(simulated.err.find("pipewright: warning: " + turns), std::string::npos)
        << simulated.err;
    const auto planned = testing::run_cli({"plan", project, "--calibration", two});
    ASSERT_EQ(planned.code, 0) << planned.err;
    EXPECT_NE(planned.err.find("pipewright: warning: the planned layout: " + turns),
              std::string::npos)
        << planned.err;
    const auto many = write("many.json", 64);
    for (const char* command : {"simulate", "plan"}) {
        const auto quiet = testing::run_cli({command, project, "--calibration", many});
        ASSERT_EQ(quiet.code, 0) << quiet.err;
        EXPECT_EQ(quiet.err.find("take turns"), std::string::npos) << command << quiet.err;
    }
}

}  // namespace
}  // namespace pipewright

namespace pipewright {
namespace {

// CPU devices priced from the catalog's generic "cpu" say so on the Costs
// line, with how to measure the machine; a calibration of it, or a GPU
// project, has nothing to say.
TEST(CalibrationCli, UncalibratedCpuTimesAreCalledARoughGuess) {
    testing::TempDir dir;
    const auto calibration = (dir / "cpu.json").string();
    std::ofstream(calibration) << device_calibration_to_json(cpu_calibration(2, 1)).dump(1);
    const std::string cpu = testing::example("mlp-cpu.json");
    const std::string note =
        "Costs       CPU devices priced from the catalog's generic \"cpu\" "
        "figures, a rough guess";
    const auto guessed = testing::run_cli({"simulate", cpu});
    ASSERT_EQ(guessed.code, 0) << guessed.err;
    EXPECT_NE(guessed.out.find(note), std::string::npos) << guessed.out;
    EXPECT_NE(guessed.out.find("pipewright calibrate --device cpu"), std::string::npos);
    const auto measured = testing::run_cli({"simulate", cpu, "--calibration", calibration});
    ASSERT_EQ(measured.code, 0) << measured.err;
    EXPECT_EQ(measured.out.find("rough guess"), std::string::npos) << measured.out;
    const auto gpu = testing::run_cli({"simulate", testing::example("dummy-2gpu.json")});
    ASSERT_EQ(gpu.code, 0) << gpu.err;
    EXPECT_EQ(gpu.out.find("rough guess"), std::string::npos) << gpu.out;
}

// The turns are counted per machine: the small Mixtral's 4 ranks on two
// 2-core nodes each have a core, and neither a CPU profile nor a CPU
// calibration of 2 cores warns, where on one node both do.
TEST(CalibrationCli, RanksAreCountedPerMachineForTheCoresTurns) {
    testing::TempDir dir;
    const auto calibration = (dir / "two-cores.json").string();
    std::ofstream(calibration) << device_calibration_to_json(cpu_calibration(2, 1)).dump(1);
    const auto profile = (dir / "two-cores.prof.json").string();
    std::ofstream(profile) << R"({"format": "pipewright-profile", "version": 1,
        "device_kind": "cpu", "device_name": "CPU", "microbatch_size": 2, "layers": [],
        "machine": {"cores": 2, "threads": 1}})";
    const std::string one_node = testing::example("mixtral-tiny-e2-cpu.json");
    nlohmann::json project;
    std::ifstream(one_node) >> project;
    const auto node = [](const std::string& name, int first) {
        nlohmann::json devices = nlohmann::json::array();
        for (int d = first; d < first + 2; ++d) {
            devices.push_back({{"name", "cpu" + std::to_string(d)}, {"spec", "cpu"}});
        }
        return nlohmann::json{{"name", name},
                              {"containers", {{{"name", "proc"}, {"devices", devices}}}}};
    };
    project["topology"]["nodes"] = {node("a", 0), node("b", 2)};
    project["placement"][0]["device"] = "a/proc/cpu0";
    project["placement"][1]["device"] = "a/proc/cpu1";
    const auto two_nodes = (dir / "two-nodes.json").string();
    std::ofstream(two_nodes) << project.dump(1);
    for (const auto& [option, file] : {std::pair<std::string, std::string>{"--profile", profile},
                                       {"--calibration", calibration}}) {
        const auto shared = testing::run_cli({"simulate", one_node, option, file});
        ASSERT_EQ(shared.code, 0) << shared.err;
        EXPECT_NE(shared.err.find("take turns on the cores"), std::string::npos) << shared.err;
        const auto apart = testing::run_cli({"simulate", two_nodes, option, file});
        ASSERT_EQ(apart.code, 0) << apart.err;
        EXPECT_EQ(apart.err.find("take turns on the cores"), std::string::npos) << apart.err;
    }
}

}  // namespace
}  // namespace pipewright
