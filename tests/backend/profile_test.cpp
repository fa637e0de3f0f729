// `pipewright profile`: measured layer and transfer costs, the profile file
// they make, its use by the simulator, and the command's errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <thread>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/profiler.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/cost_model.h"
#include "pipewright/sim/simulation.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

// Three linear layers with GELUs between them, on two ranks.
test::MlpSpec small_mlp() {
    test::MlpSpec spec;
    spec.layers = 3;
    spec.width = 64;
    spec.batch = 32;
    spec.microbatches = 4;
    return spec;
}

fs::path write_project(const fs::path& dir) {
    return test::write_project(dir, small_mlp());
}

// One measurement shared by the tests that only read it: profiling is the
// slow part.
const Profile& measured_profile() {
    static const Profile profile = [] {
        const auto dir = test::temp_dir("profile-shared");
        backend::ProfileOptions o;
        o.project = write_project(dir).string();
        o.threads = 1;
        o.repeats = 3;
        o.warmup = 1;
        o.backend_program = PIPEWRIGHT_BACKEND_PATH;  // the second rank of the transfer
        std::ostringstream err;
        auto outcome = backend::profile_project(o, err);
        if (outcome.exit_code != 0 || !outcome.profile) {
            throw std::runtime_error("profiling failed: " + err.str());
        }
        return *outcome.profile;
    }();
    return profile;
}

TEST(Profile, MeasuresEveryLayerAndTheTransfer) {
    const Profile& p = measured_profile();
    const auto project = test::analyze_text(test::mlp_project_json(small_mlp()));
    ASSERT_EQ(p.layers.size(), project.layers.size());
    EXPECT_EQ(p.device_kind, "cpu");
    EXPECT_EQ(p.microbatch_size, project.microbatch_size);
    EXPECT_EQ(p.machine.threads, 1);
    EXPECT_EQ(p.machine.repeats, 3);
    // Both ranks of the run computed while each layer was timed (one a core).
    EXPECT_EQ(p.machine.concurrent_ranks,
              std::min(2, static_cast<int>(std::max(1U, std::thread::hardware_concurrency()))));
    for (std::size_t l = 0; l < p.layers.size(); ++l) {
        const auto& m = p.layers[l];
        const auto& spec = project.project.model.layers[l];
        SCOPED_TRACE(m.name);
        EXPECT_EQ(m.name, spec.name);
        EXPECT_GT(m.forward_ms, 0);
        EXPECT_GT(m.backward_input_ms + m.backward_weight_ms, 0);
        if (spec.type == "linear") {
            EXPECT_GT(m.backward_weight_ms, 0);
        } else {
            EXPECT_EQ(m.backward_weight_ms, 0) << "a GELU has no weights";
        }
        if (l == 0) {
            EXPECT_EQ(m.backward_input_ms, 0) << "the data needs no gradient";
        } else {
            EXPECT_GT(m.backward_input_ms, 0);
        }
    }
    ASSERT_TRUE(p.transfer.has_value());
    EXPECT_GT(p.transfer->bandwidth_GBps, 0);
    // A fit over noisy samples may put the intercept below zero, which the
    // fit clamps; every message itself took time.
    EXPECT_GE(p.transfer->latency_us, 0);
    EXPECT_GE(p.transfer_samples.size(), 2U);
    for (const auto& sample : p.transfer_samples) {
        EXPECT_GT(sample.seconds, 0) << sample.bytes << " bytes";
    }
    // A receive whose message is in still costs the rank its posting and
    // taking: some time, far less than the transfer it did not wait for.
    ASSERT_TRUE(p.ready_receive_us.has_value());
    EXPECT_GT(*p.ready_receive_us, 0);
    EXPECT_LT(*p.ready_receive_us, 1e6 * p.transfer_samples.back().seconds);
    EXPECT_EQ(p.machine.transport, "gloo");
}

// Micro-batches of 8 out of 32: measured at 8 (the profile's own size), at 1
// and 4, and at the whole 32, so that a plan with other micro-batches reads
// measured times.
TEST(Profile, MeasuresTheMicroBatchSizesAPlanMayChoose) {
    const Profile& p = measured_profile();
    EXPECT_EQ(p.measured_sizes(), (std::vector<int>{1, 4, 8, 32}));
    for (const auto& l : p.layers) {
        SCOPED_TRACE(l.name);
        ASSERT_EQ(l.other_sizes.size(), 3U);
        EXPECT_EQ(l.other_sizes[0].microbatch_size, 1);
        EXPECT_EQ(l.other_sizes[1].microbatch_size, 4);
        EXPECT_EQ(l.other_sizes[2].microbatch_size, 32);
        for (const auto& t : l.other_sizes) {
            EXPECT_GT(t.forward_ms, 0);
            EXPECT_TRUE(t.backward_ms.has_value());
        }
    }
}

TEST(Profile, ActivationBytesAreWhatCoreComputes) {
    const Profile& p = measured_profile();
    const auto project = test::analyze_text(test::mlp_project_json(small_mlp()));
    const CostModelOptions analytic;
    for (std::size_t l = 0; l < p.layers.size(); ++l) {
        SCOPED_TRACE(p.layers[l].name);
        ASSERT_TRUE(p.layers[l].activation_bytes.has_value());
        const LayerCost c =
            layer_cost(project, static_cast<int>(l), project.rank_specs[0], analytic);
        EXPECT_EQ(static_cast<double>(*p.layers[l].activation_bytes), c.stash_bytes);
    }
}

TEST(Profile, FileRoundTripsThroughTheSimulatorsReader) {
    const Profile& p = measured_profile();
    const auto dir = test::temp_dir("profile-roundtrip");
    const fs::path file = dir / "profile.json";
    write_file_atomically(file, profile_to_json(p).dump(2));
    const Profile back = load_profile_file(file);
    // JSON keeps doubles exactly (shortest round-trip printing).
    EXPECT_EQ(back, p);
}

TEST(Profile, SimulationUsesTheMeasuredCosts) {
    const Profile& p = measured_profile();
    const auto project = test::analyze_text(test::mlp_project_json(small_mlp()));
    CostModelOptions options;
    options.profile = &p;
    const SimulationReport report = simulate_project(project, options);
    EXPECT_GT(report.iteration_time_s, 0);
    ASSERT_EQ(report.stages.size(), project.stages.size());
    for (std::size_t s = 0; s < project.stages.size(); ++s) {
        double forward_ms = 0;
        for (int l = project.stages[s].first_layer; l <= project.stages[s].last_layer; ++l) {
            forward_ms += p.layers[static_cast<std::size_t>(l)].forward_ms;
        }
        EXPECT_NEAR(report.stages[s].forward_s, forward_ms * 1e-3, 1e-12);
    }
    ASSERT_FALSE(report.links.empty());
    // A link carrying b bytes is busy b / bandwidth: the measured bandwidth.
    const auto& link = report.links.front();
    ASSERT_GT(link.bytes, 0);
    EXPECT_NEAR(link.busy_s, link.bytes / (p.transfer->bandwidth_GBps * 1e9), 1e-12);
}

TEST(Profile, FitRecoversLatencyAndBandwidth) {
    // 10 us + bytes / 2 GB/s, exactly.
    std::vector<TransferSample> samples;
    for (double bytes : {1e3, 1e5, 1e6, 1e7}) {
        samples.push_back({bytes, 10e-6 + bytes / 2e9});
    }
    const backend::TransferFit fit = backend::fit_transfer(samples);
    EXPECT_NEAR(fit.link.latency_us, 10, 1e-6);
    EXPECT_NEAR(fit.link.bandwidth_GBps, 2, 1e-9);

    // Noise that tilts the line below zero at zero bytes is clamped.
    const backend::TransferFit clamped =
        backend::fit_transfer({{1e3, 1e-6}, {1e6, 2e-3}, {2e6, 4.2e-3}});
    EXPECT_EQ(clamped.link.latency_us, 0);
    EXPECT_GT(clamped.link.bandwidth_GBps, 0);

    EXPECT_THROW((void)backend::fit_transfer({{1e3, 1e-6}}), std::invalid_argument);
    EXPECT_THROW((void)backend::fit_transfer({{1e3, 1e-6}, {1e3, 2e-6}}), std::invalid_argument);
}

TEST(Profile, CollectiveFitsAreTheRingFormulaWithTwoMembers) {
    // A ring of two over a link of 20 us and 3 GB/s: all-reduce 2α + bytes/B,
    // all-gather α + bytes/2B.
    std::vector<TransferSample> reduce;
    std::vector<TransferSample> gather;
    for (double bytes : {65536.0, 1e6, 4e6, 16e6}) {
        reduce.push_back({bytes, 2 * 20e-6 + bytes / 3e9});
        gather.push_back({bytes, 20e-6 + bytes / 6e9});
    }
    const backend::CollectiveFits fits = backend::fit_collectives(reduce, gather);
    EXPECT_NEAR(fits.all_reduce.link.latency_us, 20, 1e-6);
    EXPECT_NEAR(fits.all_reduce.link.bandwidth_GBps, 3, 1e-9);
    EXPECT_NEAR(fits.all_gather.link.latency_us, 20, 1e-6);
    EXPECT_NEAR(fits.all_gather.link.bandwidth_GBps, 3, 1e-9);
    EXPECT_EQ(fits.all_reduce.samples.size(), 4U);
}

TEST(Profile, MeasuresTheCollectivesOfDataParallelism) {
    const Profile& p = measured_profile();
    for (const auto* c : {&p.all_reduce, &p.all_gather}) {
        ASSERT_TRUE(c->has_value());
        EXPECT_GT((*c)->link.bandwidth_GBps, 0);
        EXPECT_GE((*c)->link.latency_us, 0);
        // The default sizes and the stages' gradients.
        EXPECT_GE((*c)->samples.size(), backend::default_collective_sizes().size());
        for (const auto& sample : (*c)->samples) {
            EXPECT_GT(sample.seconds, 0) << sample.bytes << " bytes";
        }
    }
}

// With a profile's all-reduce, each stage's gradient reduction over two
// replicas costs what the ring formula makes of the measured link, whatever
// the topology's links say, and ZeRO-1 is priced as runs do it: an
// all-reduce, then the measured all-gather of the updated shards.
TEST(Profile, DataParallelSimulationPricesTheMeasuredCollectives) {
    Profile p = measured_profile();
    p.all_reduce->link = {0.5, 40};  // slower than any link of the project
    p.all_gather->link = {0.25, 60};
    test::MlpSpec spec = small_mlp();
    nlohmann::json j = nlohmann::json::parse(test::mlp_project_json(spec));
    // Every layer on one device, and a second replica on the other.
    nlohmann::json all = nlohmann::json::array();
    for (const auto& stage : j["placement"]) {
        for (const auto& layer : stage["layers"]) {
            all.push_back(layer);
        }
    }
    const std::string first = j["placement"][0]["device"];
    j["placement"] = nlohmann::json::array({{{"device", first}, {"layers", all}}});
    j["training"]["schedule"] = "gpipe";
    j["data_parallel"] = {{"size", 2}, {"overlap_gradient_sync", false}};
    for (const int zero : {0, 1}) {
        SCOPED_TRACE(zero);
        j["data_parallel"]["zero_stage"] = zero;
        const auto project = test::analyze_text(j.dump());
        CostModelOptions options;
        options.profile = &p;
        const SimulationReport report = simulate_project(project, options);
        ASSERT_EQ(report.collectives.size(), 1U);
        const StageCollectiveCost& c = report.collectives[0];
        EXPECT_EQ(c.kind, CollectiveKind::all_reduce);
        const double half = c.gradient_bytes / 2;
        EXPECT_NEAR(c.reduce_s, 2 * (40e-6 + half / 0.5e9), 1e-12);
        if (zero == 1) {
            EXPECT_NEAR(c.gather_s, 60e-6 + half / 0.25e9, 1e-12);
        }
    }
}

TEST(ProfileCommand, WritesAProfileThatSimulateReads) {
    const auto dir = test::temp_dir("profile-cli");
    const auto project = write_project(dir);
    const fs::path out = dir / "measured.json";
    const test::CliResult r =
        test::run_cli("profile " + project.string() + " --out " + out.string() +
                          " --threads 1 --repeats 2 --warmup 0",
                      dir);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("input grad"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("fc0"), std::string::npos) << r.output;
    const Profile p = load_profile_file(out);
    EXPECT_EQ(p.layers.size(), 5U);

    const test::CliResult sim = test::run_cli(
        "simulate " + project.string() + " --profile " + out.string() + " --json", dir);
    ASSERT_EQ(sim.code, 0) << sim.output;
    const auto report = nlohmann::json::parse(test::last_json_object(sim.output));
    EXPECT_GT(report.at("iteration_time_s").get<double>(), 0);
}

// `profile p.json --out p.json` would replace the project it measures:
// refused before measuring, the project kept.
TEST(ProfileCommand, AnOutThatIsTheProjectIsRefusedBeforeMeasuring) {
    const auto dir = test::temp_dir("profile-over-input");
    const auto project = write_project(dir);
    const std::string before = read_text_file(project);
    fs::create_symlink(project, dir / "link.json");
    for (const auto& out : {project, dir / "link.json"}) {
        const test::CliResult r =
            test::run_cli("profile " + project.string() + " --out " + out.string(), dir);
        EXPECT_EQ(r.code, 2) << r.output;
        EXPECT_NE(r.output.find("is the project this command reads"), std::string::npos)
            << r.output;
        EXPECT_EQ(r.output.find("input grad"), std::string::npos) << "measured first";
        EXPECT_EQ(read_text_file(project), before);
    }
    fs::remove_all(dir);
}

TEST(ProfileCommand, UnwritableOutNamesThePath) {
    const auto dir = test::temp_dir("profile-unwritable");
    const auto project = write_project(dir);
    const std::string missing = (dir / "no-such-folder" / "profile.json").string();
    const test::CliResult r =
        test::run_cli("profile " + project.string() + " --out " + missing, dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.output.find(missing), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("profiling"), std::string::npos) << "checked before measuring";

    const test::CliResult folder =
        test::run_cli("profile " + project.string() + " --out " + dir.string(), dir);
    EXPECT_EQ(folder.code, 1);
    EXPECT_NE(folder.output.find("it is a folder"), std::string::npos) << folder.output;

    // Folders that take no new file, even for root, and files that are not
    // regular: refused before measuring, with the reason.
    for (const std::string target : {"/sys/pipewright-profile.json", "/proc/version"}) {
        const test::CliResult r2 =
            test::run_cli("profile " + project.string() + " --out " + target, dir);
        EXPECT_EQ(r2.code, 1) << target;
        EXPECT_NE(r2.output.find("cannot write the profile " + target), std::string::npos)
            << r2.output;
        EXPECT_EQ(r2.output.find("No such file or directory"), std::string::npos) << r2.output;
        EXPECT_EQ(r2.output.find("input grad"), std::string::npos) << "checked before measuring";
    }
}

TEST(ProfileCommand, InvalidProjectListsItsProblems) {
    const auto dir = test::temp_dir("profile-invalid");
    auto j = nlohmann::json::parse(test::mlp_project_json(small_mlp()));
    j["model"]["layers"][0]["out_features"] = -3;
    j["training"]["microbatches"] = 0;
    const fs::path project = dir / "bad.json";
    write_file_atomically(project, j.dump());
    const test::CliResult r =
        test::run_cli("profile " + project.string() + " --out " + (dir / "p.json").string(), dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.output.find("problems"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("model.layers[0]"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("training.microbatches"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir / "p.json"));

    const test::CliResult missing =
        test::run_cli("profile " + (dir / "nothing.json").string(), dir);
    EXPECT_EQ(missing.code, 1);
    EXPECT_NE(missing.output.find("nothing.json"), std::string::npos) << missing.output;
}

TEST(ProfileCommand, UsageErrorsAndCudaRefusal) {
    const auto dir = test::temp_dir("profile-usage");
    const auto project = write_project(dir);
    EXPECT_EQ(test::run_cli("profile", dir).code, 2);
    EXPECT_EQ(test::run_cli("profile " + project.string() + " --repeats 0", dir).code, 2);
    EXPECT_EQ(test::run_cli("profile " + project.string() + " --device tpu", dir).code, 2);
    EXPECT_EQ(test::run_cli("profile " + project.string() + " --threads -1", dir).code, 2);

    // Sizes are whole samples, and no larger than a pipeline's batch (32).
    EXPECT_EQ(test::run_cli("profile " + project.string() + " --sizes 0,4", dir).code, 2);
    const test::CliResult too_large = test::run_cli(
        "profile " + project.string() + " --sizes 64 --out " + (dir / "p.json").string(), dir);
    EXPECT_EQ(too_large.code, 1);
    EXPECT_NE(too_large.output.find("--sizes: 64 samples is not a micro-batch of this project"),
              std::string::npos)
        << too_large.output;

    const test::CliResult cuda = test::run_cli(
        "profile " + project.string() + " --device cuda --out " + (dir / "p.json").string(), dir);
    EXPECT_EQ(cuda.code, 1);
    EXPECT_NE(cuda.output.find("--device cuda"), std::string::npos) << cuda.output;
    EXPECT_FALSE(fs::exists(dir / "p.json"));
}

}  // namespace
}  // namespace pipewright
