// `pipewright run` end to end with real worker processes over c10d/Gloo:
// equivalence with single-process training, outputs, measured sends and
// memory, and faults (each ends quickly with a clear message, leaving no
// process behind).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>
#include <tuple>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "execution/compute_device.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/timeline.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using test::run_cli;
using test::temp_dir;
using test::write_project;

TEST(Launcher, GlooRunEqualsSingleProcessTrainingAndWritesOutputs) {
    const auto dir = temp_dir("gloo");
    test::MlpSpec spec;
    spec.schedule = "1f1b";
    const auto project = write_project(dir, spec);
    const auto out = dir / "run";
    const auto r = run_cli("run " + project.string() + " --steps 3 --dtype float64 --save-params " +
                               "--threads-per-rank 1 --json --progress json --out " + out.string(),
                           dir);
    ASSERT_EQ(r.code, 0) << r.output;

    const auto p = test::analyze_text(test::mlp_project_json(spec));
    std::vector<torch::Tensor> pipelined;
    for (int s = 0; s < p.schedule.num_stages; ++s) {
        std::vector<torch::Tensor> stage;
        stage = test::saved_stage_parameters(out, s);
        pipelined.insert(pipelined.end(), stage.begin(), stage.end());
    }
    const auto reference = test::reference_parameters(p, 3, torch::kFloat64);
    EXPECT_LE(test::max_relative_difference(pipelined, reference), 1e-5);

    for (const char* f : {"timeline.json", "trace.json", "metrics.json", "run.log"}) {
        EXPECT_TRUE(fs::exists(out / f)) << f;
    }
    const Timeline t = load_timeline_file(out / "timeline.json");
    EXPECT_EQ(t.source, "measured");
    EXPECT_EQ(t.num_ranks(), 2);
    std::size_t actions = 0;
    for (const auto& rank : p.schedule.ranks) {
        actions += rank.size();
    }
    EXPECT_EQ(t.events.size(), actions);
    const auto summary = nlohmann::json::parse(test::last_json_object(r.output));
    EXPECT_EQ(summary.at("losses").size(), 3U);
    EXPECT_GT(summary.at("iteration_time_s").get<double>(), 0);
    EXPECT_GT(summary.at("throughput_samples_per_s").get<double>(), 0);
    EXPECT_EQ(summary.at("devices").size(), 2U);
    EXPECT_NE(r.output.find("{\"event\":\"step\""), std::string::npos) << r.output;
    fs::remove_all(dir);
}

// The event of the receive that matches a send.
const TimelineEvent* matching_recv(const Timeline& t, const TimelineEvent& send) {
    const Action want = matching_transfer(send.action);
    for (const auto& e : t.events) {
        if (e.action == want) {
            return &e;
        }
    }
    return nullptr;
}

TEST(Launcher, SendsEndWhenTheirTransferCompletesAndMemoryIsSampled) {
    const auto dir = temp_dir("sends");
    test::MlpSpec spec;
    spec.schedule = "gpipe";
    spec.width = 512;
    spec.layers = 4;
    spec.microbatches = 8;
    spec.batch = 256;
    const auto project = write_project(dir, spec);
    const auto out = dir / "run";
    const auto r = run_cli("run " + project.string() + " --steps 3 --threads-per-rank 1 --json " +
                               "--out " + out.string(),
                           dir);
    ASSERT_EQ(r.code, 0) << r.output;
    const Timeline t = load_timeline_file(out / "timeline.json");
    const double iteration = t.makespan_s();
    ASSERT_GT(iteration, 0);

    // A send ends when its transfer completes, not when the step ends (what
    // polling only at the end of the step measured). Asserted as orderings,
    // which hold however loaded the machine: every send ends after it
    // starts, a rank's sends end in the order it posted them (one peer
    // takes them in that order), and each rank's first send ends before
    // its last computation does. Under gpipe that is most of an iteration
    // earlier: rank 0's first forward send is taken while rank 0 still has
    // every backward to run, rank 1's first gradient while it has seven.
    int sends = 0;
    std::vector<double> last_end(2, -1);
    std::vector<double> first_send_end(2, -1);
    std::vector<double> last_compute_end(2, -1);
    for (const auto& e : t.events) {
        const auto lane = static_cast<std::size_t>(e.rank);
        if (is_compute(e.action.type)) {
            last_compute_end[lane] = std::max(last_compute_end[lane], e.end_s);
        }
        if (!is_send(e.action.type)) {
            continue;
        }
        ASSERT_NE(matching_recv(t, e), nullptr) << to_string(e.action);
        ++sends;
        EXPECT_GE(e.end_s, e.start_s) << to_string(e.action);
        EXPECT_GE(e.end_s, last_end[lane]) << to_string(e.action) << " ends before an earlier send";
        last_end[lane] = e.end_s;
        if (first_send_end[lane] < 0) {
            first_send_end[lane] = e.end_s;
        }
    }
    ASSERT_EQ(sends, 2 * spec.microbatches);
    for (std::size_t lane = 0; lane < 2; ++lane) {
        EXPECT_LT(first_send_end[lane], last_compute_end[lane])
            << "rank " << lane << ": its first send ended with the step, not with its transfer";
    }

    // Every rank's memory series covers the step (a sample per action).
    ASSERT_EQ(t.memory.size(), 2U);
    for (const auto& series : t.memory) {
        EXPECT_GT(series.size(), 2 * static_cast<std::size_t>(spec.microbatches));
    }
    const auto metrics = nlohmann::json::parse(read_text_file(out / "metrics.json"));
    for (const auto& d : metrics.at("devices")) {
        EXPECT_GT(d.at("model_peak_memory_bytes").get<double>(), 0) << d.dump();
        EXPECT_GE(d.at("peak_memory_bytes").get<double>(),
                  d.at("model_peak_memory_bytes").get<double>() +
                      d.at("runtime_memory_bytes").get<double>());
    }
    const auto summary = nlohmann::json::parse(test::last_json_object(r.output));
    EXPECT_EQ(summary.at("devices").at(0).at("model_peak_memory_bytes"),
              metrics.at("devices").at(0).at("model_peak_memory_bytes"));
    fs::remove_all(dir);
}

TEST(Launcher, KilledWorkerStopsTheRunNamingTheRank) {
    const auto dir = temp_dir("kill");
    test::MlpSpec spec;
    spec.width = 64;
    const auto project = write_project(dir, spec);
    const auto out = dir / "run";
    test::CliResult r;
    std::thread launcher([&] {
        // Bound, each rank's log starts with a note naming its cores, which
        // is no reason for its death.
        r = run_cli("run " + project.string() +
                        " --steps 1000000 --threads-per-rank 1 --core-binding on --out " +
                        out.string(),
                    dir);
    });
    // Wait until training is under way, then kill rank 1.
    const std::regex pid_line("rank 1: pid ([0-9]+)");
    pid_t victim = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        std::string log;
        try {
            log = read_text_file(out / "run.log");
        } catch (const std::exception&) {
            // not written yet
        }
        std::smatch m;
        if (std::regex_search(log, m, pid_line) && log.find("step 2/") != std::string::npos) {
            victim = std::stoi(m[1]);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_GT(victim, 0) << "training never started";
    const auto killed_at = std::chrono::steady_clock::now();
    ::kill(victim, SIGKILL);
    launcher.join();
    const double after_kill =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
    EXPECT_NE(r.code, 0);
    EXPECT_LT(after_kill, 10.0);
    EXPECT_NE(r.output.find("rank 1 failed (killed by signal 9"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("bound to"), std::string::npos) << r.output;
    EXPECT_EQ(test::processes_mentioning(out.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

TEST(Launcher, TakenPortIsAClearError) {
    const auto dir = temp_dir("port");
    const auto project = write_project(dir, test::MlpSpec{});
    c10d::TCPStoreOptions so;
    so.port = 0;
    so.isServer = true;
    so.waitWorkers = false;
    const c10d::TCPStore taken("127.0.0.1", so);
    const auto r = run_cli("run " + project.string() + " --steps 1 --port " +
                               std::to_string(taken.getPort()) + " --out " + (dir / "run").string(),
                           dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("already in use"), std::string::npos) << r.output;
    EXPECT_LT(r.seconds, 30);
    EXPECT_EQ(test::processes_mentioning((dir / "run").string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// What `--device cuda` says without a GPU depends on the LibTorch: Debian's
// CPU-only one cannot use GPUs at all; a CUDA one (PyPI's wheel, as
// scripts/check-torch-upstream.sh builds) finds none visible.
TEST(Launcher, CudaWithoutAGpuIsAClearError) {
    if (backend::built_with_cuda() && backend::visible_gpus() > 0) {
        GTEST_SKIP() << "a GPU is visible: --device cuda runs";
    }
    const auto dir = temp_dir("cuda");
    const auto project = write_project(dir, test::MlpSpec{});
    const auto r = run_cli("run " + project.string() + " --device cuda", dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.output.find(backend::built_with_cuda()
                                ? "--device cuda: no GPU is visible"
                                : "--device cuda: this Pipewright is built against a LibTorch "
                                  "without CUDA"),
              std::string::npos)
        << r.output;
    fs::remove_all(dir);
}

// Every layer type of the catalog builds (modules_test checks each), so the
// configuration the backend cannot build is a precision: float16 on CPU.
TEST(Launcher, UnsupportedConfigurationIsAClearErrorBeforeAnyWorkerStarts) {
    const auto dir = temp_dir("float16");
    auto project = nlohmann::json::parse(test::mlp_project_json(test::MlpSpec{}));
    project["training"]["dtype"] = "float16";
    write_file_atomically(dir / "project.json", project.dump(2));
    const auto out = dir / "run";
    const auto r =
        run_cli("run " + (dir / "project.json").string() + " --out " + out.string(), dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("float16 training is not supported on CPU"), std::string::npos)
        << r.output;
    EXPECT_LT(r.seconds, 30);
    EXPECT_FALSE(fs::exists(out / "rank-0.log")) << "a worker was started";
    EXPECT_EQ(test::processes_mentioning(out.string()), std::vector<pid_t>{});
    fs::remove_all(dir);
}

// Data-parallel real runs come later; until then a run says so before
// starting anything rather than train one replica silently.
// What real data-parallel runs refuse, before any worker starts: ZeRO
// stages that only the simulator models, and more replicas than devices.
TEST(Launcher, DataParallelRunsRefuseZeroTwoAndThreeInWords) {
    const auto dir = temp_dir("data-parallel-zero");
    test::MlpSpec spec;
    spec.replicas = 2;
    for (const int zero : {2, 3}) {
        spec.zero_stage = zero;
        const auto project = write_project(dir, spec);
        const auto out = dir / ("run-" + std::to_string(zero));
        const auto r = run_cli("run " + project.string() + " --out " + out.string(), dir);
        EXPECT_EQ(r.code, 1) << r.output;
        EXPECT_NE(r.output.find("data_parallel.zero_stage: ZeRO stage " + std::to_string(zero) +
                                " is simulation-only"),
                  std::string::npos)
            << r.output;
        EXPECT_FALSE(fs::exists(out / "rank-0.log")) << "a worker was started";
    }
    fs::remove_all(dir);
}

// Mixtures of experts, latent attention, sliding windows, query and key
// norms and post-norms are priced by the simulator only: a run refuses
// them, naming the field, before any worker starts.
// One transformer block on one device of `spec` ("dev0"), with `block` and
// `training` added to its layer and its training settings.
nlohmann::json one_block_project(const std::string& spec, const nlohmann::json& block,
                                 const nlohmann::json& training) {
    nlohmann::json layer = {
        {"name", "block"}, {"type", "transformer_block"}, {"hidden", 64}, {"heads", 4}};
    layer.update(block);
    nlohmann::json settings = {{"batch_size", 4}, {"microbatches", 1}, {"schedule", "gpipe"}};
    settings.update(training);
    return {{"format", "pipewright-project"},
            {"version", 1},
            {"model",
             {{"name", "block"},
              {"input", {{"shape", {8, 64}}, {"dtype", "float32"}}},
              {"loss", "mse"},
              {"layers", {layer}}}},
            {"topology",
             {{"nodes",
               {{{"name", "node0"},
                 {"containers",
                  {{{"name", "c0"}, {"devices", {{{"name", "dev0"}, {"spec", spec}}}}}}}}}}}},
            {"placement", {{{"device", "node0/c0/dev0"}, {"layers", {"block"}}}}},
            {"training", settings}};
}

TEST(Launcher, BlocksTheBackendDoesNotBuildAreRefusedInWords) {
    const auto dir = temp_dir("unbuilt-blocks");
    const nlohmann::json latent = {{"kv_lora_rank", 16}, {"qkv_bias", false}};
    const nlohmann::json window = {{"sliding_window", 4}, {"flash_attention", true}};
    const nlohmann::json qk = {{"qk_norm", true}};
    const nlohmann::json post = {{"post_norms", true}};
    for (const auto& [extra, field, words] :
         {std::tuple{latent, "model.layers[0].kv_lora_rank", "multi-head latent attention"},
          std::tuple{window, "model.layers[0].sliding_window", "a sliding attention window"},
          std::tuple{qk, "model.layers[0].qk_norm", "a query and key norm"},
          std::tuple{post, "model.layers[0].post_norms", "a block with post-norms"}}) {
        const nlohmann::json project = one_block_project("cpu", extra, nlohmann::json::object());
        const auto path = dir / (std::string(field).substr(16) + ".json");
        std::ofstream(path) << project.dump(2);
        const auto out = dir / (std::string(field).substr(16) + "-run");
        const auto r = run_cli("run " + path.string() + " --out " + out.string(), dir);
        EXPECT_EQ(r.code, 1) << r.output;
        EXPECT_NE(r.output.find(std::string(field) + ": " + words + " is simulation-only for now"),
                  std::string::npos)
            << r.output;
        EXPECT_FALSE(fs::exists(out / "rank-0.log")) << "a worker was started";
    }
    fs::remove_all(dir);
}

// A project that describes another framework's gradient accumulation runs
// as Pipewright's runs accumulate, and says so.
TEST(Launcher, AnotherFrameworksGradientAccumulationIsNotedInWords) {
    const auto dir = temp_dir("accumulation");
    const auto written = write_project(dir, test::MlpSpec{});
    nlohmann::json project = nlohmann::json::parse(std::ifstream(written));
    project["training"]["gradient_accumulation"] = "add";
    std::ofstream(written) << project.dump(2);
    const auto r = run_cli("run " + written.string() + " --steps 1 --threads-per-rank 1 --out " +
                               (dir / "run").string(),
                           dir);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("note: training.gradient_accumulation \"add\" describes a framework"),
              std::string::npos)
        << r.output;
    fs::remove_all(dir);
}

// training.attention_kernel prices a GPU framework's fused kernel; a run
// says that it computes attention with LibTorch's instead.
TEST(Launcher, AnotherFrameworksAttentionKernelIsNotedInWords) {
    const auto dir = temp_dir("attention-kernel");
    const nlohmann::json project = one_block_project("H100-SXM", {{"flash_attention", true}},
                                                     {{"attention_kernel", "flash3"}});
    const auto path = dir / "flash.json";
    std::ofstream(path) << project.dump(2);
    const auto r = run_cli(
        "run " + path.string() + " --steps 1 --threads-per-rank 1 --out " + (dir / "run").string(),
        dir);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("note: training.attention_kernel \"flash3\" names the "
                            "FlashAttention-3 kernel a GPU framework runs"),
              std::string::npos)
        << r.output;
    fs::remove_all(dir);
}

// The backend's Torch has no FP8 tensors: a float8 project is simulated,
// not trained as something else.
TEST(Launcher, Float8IsRefusedInWordsBeforeAnyWorkerStarts) {
    const auto dir = temp_dir("float8");
    const nlohmann::json project =
        one_block_project("H100-SXM", nlohmann::json::object(), {{"dtype", "float8"}});
    const auto path = dir / "fp8.json";
    std::ofstream(path) << project.dump(2);
    const auto out = dir / "fp8-run";
    const auto r = run_cli("run " + path.string() + " --out " + out.string(), dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("training.dtype: float8: FP8 training is simulation-only"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(out / "rank-0.log")) << "a worker was started";
    fs::remove_all(dir);
}

TEST(Launcher, MoreReplicasThanDevicesAreRefusedInWords) {
    const auto dir = temp_dir("data-parallel-devices");
    test::MlpSpec spec;
    spec.replicas = 2;  // four devices: room for two replicas of two ranks
    const auto project = write_project(dir, spec);
    const auto out = dir / "run";
    const auto r =
        run_cli("run " + project.string() + " --data-parallel 3 --out " + out.string(), dir);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("--data-parallel: 3 replicas of a pipeline that spans 2 devices"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(out / "rank-0.log")) << "a worker was started";
    fs::remove_all(dir);
}

// A diverging run (learning rate 1e15): its loss turns non-finite. That is a
// training outcome, not a failure: it used to end in "lost the rendezvous
// store ... type must be number, but is null" with no outputs. Without
// --stop-on-nan the run goes on and says so; with it every rank stops after
// the same step, and every output is written.
class DivergingRun : public ::testing::TestWithParam<bool> {};

TEST_P(DivergingRun, ReportsTheNonFiniteLossAndWritesEveryOutput) {
    const bool stop = GetParam();
    const auto dir = temp_dir(stop ? "nan-stop" : "nan-go-on");
    test::MlpSpec spec;
    auto j = nlohmann::json::parse(test::mlp_project_json(spec));
    j["training"]["optimizer"]["lr"] = 1e15;
    const auto project = dir / "diverging.json";
    write_file_atomically(project, j.dump(2));
    const auto out = dir / "run";
    const auto r = run_cli("run " + project.string() + " --steps 8 --threads-per-rank 1 --json " +
                               (stop ? "--stop-on-nan " : "") + "--out " + out.string(),
                           dir);
    EXPECT_EQ(r.code, stop ? 3 : 0) << r.output;
    EXPECT_NE(r.output.find("training diverged"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("lost the rendezvous store"), std::string::npos) << r.output;
    for (const char* f : {"timeline.json", "trace.json", "metrics.json", "run.log"}) {
        EXPECT_TRUE(fs::exists(out / f)) << f;
    }
    const auto losses = nlohmann::json::parse(test::last_json_object(r.output)).at("losses");
    ASSERT_FALSE(losses.empty());
    EXPECT_TRUE(losses.front().is_number()) << losses;
    // The last loss is named, never null (which means "no loss").
    ASSERT_TRUE(losses.back().is_string()) << losses;
    EXPECT_TRUE(losses.back() == "NaN" || losses.back() == "Infinity") << losses;
    if (stop) {
        // Ended right after the first non-finite step.
        std::size_t nonfinite = 0;
        for (const auto& l : losses) {
            nonfinite += l.is_string() ? 1 : 0;
        }
        EXPECT_EQ(nonfinite, 1U) << losses;
        EXPECT_LT(losses.size(), 8U) << losses;
    } else {
        EXPECT_EQ(losses.size(), 8U) << losses;
    }
    const Timeline t = load_timeline_file(out / "timeline.json");
    EXPECT_EQ(t.source, "measured");
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(StopOrGoOn, DivergingRun, ::testing::Bool(), [](const auto& test_info) {
    return test_info.param ? "StopOnNan" : "GoesOn";
});

}  // namespace
}  // namespace pipewright
