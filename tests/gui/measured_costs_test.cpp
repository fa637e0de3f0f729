// The studio's measured costs: where a project's profile is kept, how it is
// read and described, how the profiler's progress is read, and that a
// simulation priced with it uses the measured times.
#include "studio_core/simulation/measured_costs.h"

#include <gtest/gtest.h>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <filesystem>

#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"
#include "studio_core/processes/profile_process.h"
#include "studio_core/simulation/simulation_runner.h"

namespace pipewright::gui {
namespace {

Project mlp() {
    auto loaded = load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" /
                                    "mlp-cpu.json");
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

// Every layer of the model: 1 ms forward, 2 ms input and 3 ms weight
// gradient at `microbatch_size`; a 1 ms + bytes / 1 GB/s transfer.
Profile profile_of(const Model& model, int microbatch_size) {
    Profile p;
    p.device_kind = "cpu";
    p.device_name = "CPU, 1 thread";
    p.microbatch_size = microbatch_size;
    p.machine.host = "bench-host";
    for (const auto& layer : model.layers) {
        p.layers.push_back({layer.name, 1.0, 2.0, 3.0, std::nullopt});
    }
    LinkSpec link;
    link.latency_us = 1000;
    link.bandwidth_GBps = 1;
    p.transfer = link;
    return p;
}

void write(const QString& path, const QByteArray& text) {
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(text);
}

// `profile --progress json` events, as the profiler writes them.
TEST(ProfileProgress, ReadsTheRoundsOfEachSizeThenTheTransferAndIgnoresOtherLines) {
    const auto round = parse_profile_event(QStringLiteral(
        R"({"event":"profile","phase":"layers","size":2,"sizes":3,"round":3,"rounds":12,)"
        R"("warmup":false})"));
    ASSERT_TRUE(round.has_value());
    EXPECT_EQ(*round, (ProfileProgress{3, 12, 2, 3, false, false}));
    EXPECT_EQ(round->done(), 15);
    EXPECT_EQ(round->total(), 36);
    EXPECT_EQ(parse_profile_event(QStringLiteral(R"({"event":"profile","phase":"transfer"})")),
              (ProfileProgress{0, 0, 0, 0, true, false}));
    EXPECT_EQ(parse_profile_event(QStringLiteral(R"({"event":"profile","phase":"collectives"})")),
              (ProfileProgress{0, 0, 0, 0, false, true}));
    for (const char* line :
         {R"({"event":"profile","phase":"layers","size":1,"sizes":1,"round":0,"rounds":12})",
          R"({"event":"profile","phase":"layers","size":1,"sizes":1,"round":13,"rounds":12})",
          R"({"event":"step","step":1,"steps":3})", R"({"event":"profile","phase":"later"})",
          "  round 3/12 over the layers", "pipewright: profiling mlp: 7 layers", "{not json", ""}) {
        EXPECT_FALSE(parse_profile_event(QString::fromUtf8(line)).has_value()) << line;
    }
}

TEST(ProfileProcess, AsksForTheProjectTheFileAndTheChosenOptions) {
    ProfileRequest request;
    request.project_file = QStringLiteral("/r/mlp.profile.project.json");
    request.out_file = QStringLiteral("/r/mlp.profile.json");
    EXPECT_EQ(ProfileProcess::arguments(request),
              (QStringList{"profile", "/r/mlp.profile.project.json", "--out", "/r/mlp.profile.json",
                           "--progress", "json"}));
    request.device = QStringLiteral("cpu");
    request.repeats = 3;
    request.warmup = 0;
    EXPECT_EQ(
        ProfileProcess::arguments(request),
        (QStringList{"profile", "/r/mlp.profile.project.json", "--out", "/r/mlp.profile.json",
                     "--progress", "json", "--device", "cpu", "--repeats", "3", "--warmup", "0"}));
}

TEST(ProfileProcess, AFailureGivesTheProfilersReasonWithTheProblemsUnderIt) {
    QTemporaryDir dir;
    const QString script = QDir(dir.path()).filePath(QStringLiteral("fake-pipewright"));
    write(script,
          "#!/bin/sh\n"
          "echo 'pipewright: warning: this machine is busy (load average 2.0 on 2 cores)' >&2\n"
          "echo 'pipewright: profiling mlp: 7 layers at micro-batch size 16' >&2\n"
          "echo '{\"event\":\"profile\",\"phase\":\"layers\",\"size\":1,\"sizes\":1,"
          "\"round\":1,\"rounds\":3}' >&2\n"
          "echo 'pipewright: profile: layer fc2 cannot be built' >&2\n"
          "echo '  its weight is too large' >&2\n"
          "exit 1\n");
    QFile::setPermissions(script, QFile::permissions(script) | QFileDevice::ExeOwner);
    ProfileProcess process;
    QSignalSpy failed(&process, &ProfileProcess::failed);
    QSignalSpy progress(&process, &ProfileProcess::progress);
    ProfileRequest request;
    request.cli = script;
    request.project_file = QStringLiteral("p.json");
    request.out_file = QDir(dir.path()).filePath(QStringLiteral("out.json"));
    ASSERT_TRUE(process.start(request));
    ASSERT_TRUE(failed.wait(10000));
    EXPECT_EQ(failed.front().front().toString(),
              QStringLiteral("profile: layer fc2 cannot be built\n  its weight is too large"));
    ASSERT_EQ(progress.size(), 1);
    EXPECT_EQ(process.lastProgress(), (ProfileProgress{1, 3, 1, 1, false, false}));
    EXPECT_EQ(process.warnings(),
              QStringList{QStringLiteral("this machine is busy (load average 2.0 on 2 cores)")});
    EXPECT_FALSE(QFile::exists(request.out_file));
}

TEST(ProfileProcess, AMissingProgramIsAFailureInWords) {
    ProfileProcess process;
    QSignalSpy failed(&process, &ProfileProcess::failed);
    ProfileRequest request;
    request.cli = QStringLiteral("/nonexistent/pipewright");
    ASSERT_TRUE(process.start(request));
    ASSERT_TRUE(failed.wait(10000));
    EXPECT_TRUE(failed.front().front().toString().startsWith(
        QStringLiteral("cannot start /nonexistent/pipewright")));
}

TEST(MeasuredCosts, TheProfileIsKeptBesideTheRunsUnderTheModelsName) {
    EXPECT_EQ(profile_path_for(QStringLiteral("/p/runs"), QStringLiteral("mlp")),
              QStringLiteral("/p/runs/mlp.profile.json"));
    // A name that is no file name still gives one inside the folder.
    const QString odd = profile_path_for(QStringLiteral("/p/runs"), QStringLiteral("../a b"));
    EXPECT_TRUE(odd.startsWith(QStringLiteral("/p/runs/"))) << odd.toStdString();
    EXPECT_FALSE(odd.contains(QStringLiteral(".."))) << odd.toStdString();
}

TEST(MeasuredCosts, NoFileIsNoProfileAndABadFileSaysWhichField) {
    QTemporaryDir dir;
    QString error = QStringLiteral("stale");
    EXPECT_FALSE(load_measured_costs(QDir(dir.path()).filePath("none.json"), &error));
    EXPECT_TRUE(error.isEmpty());

    const QString bad = QDir(dir.path()).filePath("bad.profile.json");
    nlohmann::json j = profile_to_json(profile_of(mlp().model, 16));
    j["layers"][1]["forward_ms"] = "fast";
    write(bad, QByteArray::fromStdString(j.dump()));
    EXPECT_FALSE(load_measured_costs(bad, &error));
    EXPECT_TRUE(error.contains(QStringLiteral("layers[1].forward_ms"))) << error.toStdString();
    EXPECT_TRUE(error.contains(bad)) << error.toStdString();
}

TEST(MeasuredCosts, TheDescriptionSaysWhereWhatAndForWhichLayers) {
    QTemporaryDir dir;
    const Project project = mlp();
    const QString path = QDir(dir.path()).filePath("mlp.profile.json");
    write(path, QByteArray::fromStdString(profile_to_json(profile_of(project.model, 16)).dump()));
    QString error;
    const auto costs = load_measured_costs(path, &error);
    ASSERT_TRUE(costs) << error.toStdString();
    EXPECT_EQ(costs->profile->layers.size(), project.model.layers.size());
    EXPECT_TRUE(measured_costs_fit(*costs, project.model));
    const QString text = describe_measured_costs(*costs, project.model);
    EXPECT_TRUE(
        text.startsWith(QStringLiteral("Measured on bench-host (CPU, 1 thread) at "
                                       "micro-batch size 16, ")))
        << text.toStdString();
    EXPECT_TRUE(text.contains(QStringLiteral("7 of 7 layers and the transfers from the profile")))
        << text.toStdString();

    // Another model's profile: said, and not a fit.
    Model other = project.model;
    for (auto& layer : other.layers) {
        layer.name += "_other";
    }
    EXPECT_FALSE(measured_costs_fit(*costs, other));
    EXPECT_TRUE(describe_measured_costs(*costs, other)
                    .contains(QStringLiteral("is it a profile of another model?")));
}

// The Run panel's costs bar says what `simulate --profile` warns: four CPU
// ranks on the profile's 2 cores take turns, which the simulation ignores.
TEST(MeasuredCosts, TheDescriptionWarnsOfMoreRanksThanTheProfilesCores) {
    QTemporaryDir dir;
    const Project project = mlp();
    Profile profile = profile_of(project.model, 16);
    profile.machine.cores = 2;
    profile.machine.threads = 1;
    const QString path = QDir(dir.path()).filePath("mlp.profile.json");
    write(path, QByteArray::fromStdString(profile_to_json(profile).dump()));
    QString error;
    const auto costs = load_measured_costs(path, &error);
    ASSERT_TRUE(costs) << error.toStdString();
    EXPECT_FALSE(
        describe_measured_costs(*costs, project.model, 2).contains(QStringLiteral("take turns")));
    const QString four = describe_measured_costs(*costs, project.model, 4);
    EXPECT_TRUE(four.contains(QStringLiteral(
        "The profile was measured on a machine of 2 cores, and this layout runs 4 CPU ranks")))
        << four.toStdString();
}

TEST(MeasuredCosts, ASimulationPricedWithTheProfileUsesItsTimesScaledToTheMicroBatch) {
    const Project project = mlp();  // batch 64 in 4 micro-batches: 16 samples each
    // Measured at micro-batch size 8: each layer's times double at 16.
    auto profile = std::make_shared<const Profile>(profile_of(project.model, 8));
    const SimulationResult analytic = simulate_now(project, {});
    const SimulationResult measured = simulate_now(project, {}, profile);
    ASSERT_TRUE(analytic.ok());
    ASSERT_TRUE(measured.ok());
    EXPECT_EQ(analytic.profile, nullptr);
    EXPECT_EQ(measured.profile, profile);
    // Stage 0 holds fc1, relu1, fc2, relu2: 4 layers x 1 ms x 2.
    ASSERT_EQ(measured.report->stages.size(), 2U);
    EXPECT_NEAR(measured.report->stages[0].forward_s, 4 * 1e-3 * 2, 1e-12);
    EXPECT_NEAR(measured.report->stages[1].forward_s, 3 * 1e-3 * 2, 1e-12);
    EXPECT_GT(measured.report->iteration_time_s, 10 * analytic.report->iteration_time_s);

    // The runner prices with the profile it holds, until it is taken away.
    SimulationRunner runner;
    runner.setCosts(profile);
    runner.runSynchronously(project, {});
    EXPECT_DOUBLE_EQ(runner.latest()->report->iteration_time_s, measured.report->iteration_time_s);
    runner.setCosts({});
    runner.runSynchronously(project, {});
    EXPECT_DOUBLE_EQ(runner.latest()->report->iteration_time_s, analytic.report->iteration_time_s);
}

}  // namespace
}  // namespace pipewright::gui
