// The plain classes behind the Run panel: progress lines, the run summary,
// the simulated-vs-measured table, finding the command line, run folders.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <algorithm>
#include <iterator>
#include <map>

#include "pipewright/core/project_io.h"
#include "pipewright/core/run_records.h"
#include "studio_core/processes/cli_locator.h"
#include "studio_core/processes/run_folder.h"
#include "studio_core/processes/run_process.h"
#include "studio_core/processes/run_progress.h"
#include "studio_core/simulation/run_comparison.h"

namespace pipewright::gui {
namespace {

TEST(RunProgressParser, SplitsChunksIntoLinesAndReadsStepEvents) {
    RunProgressParser parser;
    auto lines = parser.feed(
        R"({"event":"step","step":1,"steps":4,"loss":0.5,"iteration_time_s":0.012}
{"event":"st)");
    ASSERT_EQ(lines.size(), 1U);
    EXPECT_EQ(lines[0].kind, RunOutputLine::Kind::step);
    EXPECT_EQ(lines[0].step, (RunStep{1, 4, 0.5, 0.012}));

    // The rest of the second line arrives later, with a Windows line end.
    lines = parser.feed(R"(ep","step":2,"steps":4,"loss":null,"iteration_time_s":0.011})"
                        "\r\n");
    ASSERT_EQ(lines.size(), 1U);
    EXPECT_EQ(lines[0].kind, RunOutputLine::Kind::step);
    EXPECT_EQ(lines[0].step.step, 2);
    EXPECT_FALSE(lines[0].step.loss.has_value());  // the last stage reports it, maybe not yet
    ASSERT_TRUE(parser.lastStep().has_value());
    EXPECT_EQ(parser.lastStep()->step, 2);
    EXPECT_TRUE(parser.messages().isEmpty());
}

TEST(RunProgressParser, KeepsPlainLinesAsMessagesForTheFailure) {
    RunProgressParser parser;
    auto lines = parser.feed(
        "pipewright: p.json: 2 problems:\n"
        "  placement[0]: unknown device\n"
        "{not json at all}\n"
        "\n"
        R"({"event":"node","node":1})"
        "\n"
        "pipewright: rank 1 failed (exit code 1)");
    ASSERT_EQ(lines.size(), 4U);
    EXPECT_EQ(lines[0].kind, RunOutputLine::Kind::message);
    EXPECT_EQ(lines[2].kind, RunOutputLine::Kind::message);  // braces, but not an event
    EXPECT_EQ(lines[3].kind, RunOutputLine::Kind::event);    // a newer event: logged, not fatal
    // The last line had no newline: finish() delivers it.
    lines = parser.finish();
    ASSERT_EQ(lines.size(), 1U);
    EXPECT_EQ(lines[0].text, QStringLiteral("pipewright: rank 1 failed (exit code 1)"));
    EXPECT_EQ(parser.failureMessage(),
              QStringLiteral("pipewright: p.json: 2 problems:\n  placement[0]: unknown device\n"
                             "{not json at all}\npipewright: rank 1 failed (exit code 1)"));
    EXPECT_EQ(parser.failureMessage(1), QStringLiteral("pipewright: rank 1 failed (exit code 1)"));
}

TEST(RunSummary, ReadsWhatRunJsonPrints) {
    const auto summary = parse_run_summary(R"({
      "schedule": "1f1b", "batch_size": 64, "microbatches": 4, "microbatch_size": 16,
      "steps": 3, "warmup_steps": 1, "iteration_time_s": 0.02,
      "throughput_samples_per_s": 3200.0, "bubble_fraction": 0.25, "clock": "shared",
      "losses": [1.5, null, 0.75], "out_dir": "/tmp/run", "devices": [], "complete": true
    })");
    ASSERT_TRUE(summary.has_value());
    EXPECT_EQ(summary->schedule, QStringLiteral("1f1b"));
    EXPECT_EQ(summary->steps, 3);
    EXPECT_DOUBLE_EQ(summary->iteration_time_s, 0.02);
    EXPECT_DOUBLE_EQ(summary->throughput_samples_per_s, 3200.0);
    EXPECT_EQ(summary->first_loss, 1.5);
    EXPECT_EQ(summary->last_loss, 0.75);
    EXPECT_EQ(summary->out_dir, QStringLiteral("/tmp/run"));
    EXPECT_FALSE(parse_run_summary("").has_value());
    EXPECT_FALSE(parse_run_summary("pipewright: run failed").has_value());
    EXPECT_FALSE(parse_run_summary(R"({"schedule": "gpipe"})").has_value());
}

TEST(RunProcess, AsksForJsonProgressTheFolderAndOverrides) {
    RunRequest request{QStringLiteral("/bin/pipewright"),
                       QStringLiteral("/r/project.json"),
                       QStringLiteral("/r"),
                       3,
                       29500,
                       QStringLiteral("cpu")};
    EXPECT_EQ(RunProcess::arguments(request),
              (QStringList{"run", "/r/project.json", "--progress", "json", "--out", "/r", "--json",
                           "--steps", "3", "--port", "29500", "--device", "cpu"}));
    request.steps.reset();
    request.port.reset();
    request.device.clear();
    EXPECT_EQ(RunProcess::arguments(request).size(), 7);
}

Timeline two_rank_timeline(double f0, double f1) {
    Timeline t;
    t.devices = {"n/c/d0", "n/c/d1"};
    t.events.push_back({0, Action{0, ActionType::forward, 0}, 0, f0});
    t.events.push_back({1, Action{1, ActionType::forward, 0}, f0, f0 + f1});
    return t;
}

TEST(RunComparison, IterationThenBusyTimePerDeviceWithTheSimulatorsError) {
    SimulationReport simulated;
    simulated.iteration_time_s = 0.010;
    DeviceMetrics d0;
    d0.name = "n/c/d0";
    d0.busy_s = 0.004;
    DeviceMetrics d1;
    d1.name = "n/c/d1";
    d1.busy_s = 0.006;
    simulated.devices = {d0, d1};
    const Timeline measured = two_rank_timeline(0.005, 0.003);

    const auto rows = compare_run(&simulated, measured, 0.0125);
    ASSERT_EQ(rows.size(), 4U);
    EXPECT_EQ(rows[0].what, QStringLiteral("Iteration time"));
    EXPECT_DOUBLE_EQ(*rows[0].simulated_s, 0.010);
    EXPECT_DOUBLE_EQ(*rows[0].measured_s, 0.0125);
    EXPECT_NEAR(*rows[0].error(), -0.2, 1e-12);  // predicted 20 % too short
    EXPECT_EQ(rows[1].device, QStringLiteral("n/c/d0"));
    EXPECT_DOUBLE_EQ(*rows[1].measured_s, 0.005);
    EXPECT_NEAR(*rows[1].error(), -0.2, 1e-12);
    EXPECT_EQ(rows[2].device, QStringLiteral("n/c/d1"));
    EXPECT_NEAR(*rows[2].error(), 1.0, 1e-12);  // predicted twice as long

    // Without metrics.json the measured timeline's span stands in.
    EXPECT_DOUBLE_EQ(*compare_run(&simulated, measured, std::nullopt)[0].measured_s, 0.008);
}

TEST(RunComparison, DevicesOnlyOneSideKnowsStillGetARow) {
    SimulationReport simulated;
    simulated.iteration_time_s = 1;
    DeviceMetrics gone;
    gone.name = "n/c/renamed";
    gone.busy_s = 0.5;
    simulated.devices = {gone};
    const auto rows = compare_run(&simulated, two_rank_timeline(0.1, 0.1), 0.2);
    ASSERT_EQ(rows.size(), 5U);
    EXPECT_FALSE(rows[1].measured_s.has_value());
    EXPECT_FALSE(rows[1].error().has_value());
    EXPECT_FALSE(rows[2].simulated_s.has_value());
    EXPECT_FALSE(rows[3].error().has_value());

    // A layout that does not simulate: only the measured side.
    const auto alone = compare_run(nullptr, two_rank_timeline(0.1, 0.1), 0.2);
    ASSERT_EQ(alone.size(), 4U);
    EXPECT_FALSE(alone[0].simulated_s.has_value());
    EXPECT_DOUBLE_EQ(*alone[2].measured_s, 0.1);
}

TEST(RunComparison, EndsWithTheMedianOfEachKindOfActionAsCompareDoes) {
    SimulationReport simulated;
    simulated.iteration_time_s = 0.01;
    simulated.timeline = two_rank_timeline(0.002, 0.004);  // forward median 3 ms
    simulated.timeline.events.push_back({0, Action{0, ActionType::backward, 0}, 0.01, 0.014});
    Timeline measured = two_rank_timeline(0.004, 0.004);  // forward median 4 ms
    measured.events.push_back({0, Action{0, ActionType::send_forward, 0}, 0.004, 0.005});

    const auto rows = compare_run(&simulated, measured, 0.012);
    std::vector<RunComparisonRow> kinds;
    std::copy_if(
        rows.begin(), rows.end(), std::back_inserter(kinds),
        [](const RunComparisonRow& r) { return r.kind == RunComparisonRow::Kind::action; });
    ASSERT_EQ(kinds.size(), 3U);
    EXPECT_EQ(kinds[0].what, QStringLiteral("Median forward (F)"));
    EXPECT_DOUBLE_EQ(*kinds[0].simulated_s, 0.003);
    EXPECT_DOUBLE_EQ(*kinds[0].measured_s, 0.004);
    EXPECT_NEAR(*kinds[0].error(), -0.25, 1e-12);
    EXPECT_EQ(kinds[1].action, ActionType::backward);
    EXPECT_FALSE(kinds[1].measured_s.has_value());
    EXPECT_EQ(kinds[2].what, QStringLiteral("Median send of activations (SEND_F)"));
    EXPECT_FALSE(kinds[2].simulated_s.has_value());
    // The kinds follow the devices.
    EXPECT_EQ(rows.back().kind, RunComparisonRow::Kind::action);
    EXPECT_EQ(rows[1].kind, RunComparisonRow::Kind::busy);
}

Project example_project() {
    auto loaded = load_project_file(PIPEWRIGHT_ASSETS_DIR "/examples/mlp-cpu.json");
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

TEST(RunComparison, SamePlanIgnoresOnlyWhereTheScheduleCsvIsNamedFrom) {
    Project a = example_project();
    Project b = a;
    EXPECT_TRUE(same_run_plan(a, b));
    b.training.microbatches = 8;
    EXPECT_FALSE(same_run_plan(a, b));
    b = a;
    a.training.schedule.csv_path = "/abs/dir/plan.csv";
    b.training.schedule.csv_path = "plan.csv";
    EXPECT_TRUE(same_run_plan(a, b));
    b.training.schedule.csv_path = "other.csv";
    EXPECT_FALSE(same_run_plan(a, b));
}

void make_executable(const QString& path) {
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write("#!/bin/sh\n");
    file.close();
    file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
}

TEST(CliLocator, FollowsTheEnvironmentThenTheStudiosFolderThenTheBuildTreeThenPath) {
    QTemporaryDir root;
    ASSERT_TRUE(root.isValid());
    const QDir dir(root.path());
    for (const char* sub : {"bin", "build/gui", "build/cli", "path1", "path2", "custom"}) {
        ASSERT_TRUE(dir.mkpath(QString::fromLatin1(sub)));
    }
    make_executable(dir.filePath("path2/pipewright"));
    CliSearch search;
    search.app_dir = dir.filePath("build/gui");
    search.path_dirs = {dir.filePath("path1"), dir.filePath("path2")};
    EXPECT_EQ(locate_cli(search).path, dir.filePath("path2/pipewright"));

    make_executable(dir.filePath("build/cli/pipewright"));
    EXPECT_EQ(locate_cli(search).path, dir.filePath("build/cli/pipewright"));

    // Installed: the studio and the command line side by side in bin/.
    make_executable(dir.filePath("build/gui/pipewright"));
    EXPECT_EQ(locate_cli(search).path, dir.filePath("build/gui/pipewright"));

    make_executable(dir.filePath("custom/my-pipewright"));
    search.env_value = dir.filePath("custom/my-pipewright");
    EXPECT_EQ(locate_cli(search).path, dir.filePath("custom/my-pipewright"));
}

TEST(CliLocator, SaysWhyWhenItFindsNothing) {
    QTemporaryDir root;
    CliSearch search;
    search.app_dir = root.path();
    const CliLocation none = locate_cli(search);
    EXPECT_FALSE(none.found());
    EXPECT_TRUE(none.reason.contains(QStringLiteral("PIPEWRIGHT_CLI")))
        << none.reason.toStdString();

    // A wrong PIPEWRIGHT_CLI is reported, not quietly replaced by another.
    make_executable(QDir(root.path()).filePath("pipewright"));
    search.env_value = QDir(root.path()).filePath("missing");
    const CliLocation wrong = locate_cli(search);
    EXPECT_FALSE(wrong.found());
    EXPECT_TRUE(wrong.reason.contains(search.env_value)) << wrong.reason.toStdString();
    // A folder is not an executable file.
    search.env_value = root.path();
    EXPECT_FALSE(locate_cli(search).found());
}

TEST(RunFolder, RunsOfASavedProjectGoBesideItExamplesAndUnsavedOnesToTheDataFolder) {
    QTemporaryDir root;
    const QString project = QDir(root.path()).filePath("p.json");
    EXPECT_EQ(runs_dir_for(project, "mlp"), QDir(root.path()).filePath("runs"));
    const QString example = QStringLiteral(PIPEWRIGHT_ASSETS_DIR "/examples/mlp-cpu.json");
    const QString data_runs = runs_dir_for(example, "my model");
    EXPECT_FALSE(data_runs.startsWith(QStringLiteral(PIPEWRIGHT_ASSETS_DIR)))
        << data_runs.toStdString();
    EXPECT_TRUE(data_runs.endsWith(QStringLiteral("runs/my_model"))) << data_runs.toStdString();
    EXPECT_EQ(runs_dir_for({}, "my model"), data_runs);
}

TEST(RunFolder, NewFoldersNeverTakeAnExistingName) {
    QTemporaryDir root;
    const QDateTime when(QDate(2025, 3, 4), QTime(5, 6, 7));
    const QString first = new_run_dir(root.path(), "mlp", when);
    EXPECT_EQ(first, QDir(root.path()).filePath("mlp-20250304-050607"));
    ASSERT_TRUE(QDir().mkpath(first));
    EXPECT_EQ(new_run_dir(root.path(), "mlp", when), first + "-2");
}

TEST(RunFolder, TheRunsCopyOfTheProjectFindsItsScheduleCsv) {
    QTemporaryDir root;
    Project p = example_project();
    p.training.schedule.csv_path = "plans/best.csv";
    const QString copy = QDir(root.path()).filePath("run/project.json");
    ASSERT_TRUE(QDir().mkpath(QDir(root.path()).filePath("run")));
    QString error;
    ASSERT_TRUE(write_run_project(p, "/home/me/project", copy, &error)) << error.toStdString();
    const auto loaded = load_project_file(copy.toStdString());
    ASSERT_TRUE(loaded.project.has_value());
    EXPECT_EQ(loaded.project->training.schedule.csv_path, "/home/me/project/plans/best.csv");
    // Apart from where it names the CSV, the copy is the project as saved.
    const QString plain = QDir(root.path()).filePath("plain.json");
    save_project_file(p, plain.toStdString());
    const auto saved = load_project_file(plain.toStdString());
    ASSERT_TRUE(saved.project.has_value());
    EXPECT_TRUE(same_run_plan(*loaded.project, *saved.project));

    EXPECT_FALSE(write_run_project(p, {}, "/nonexistent-dir/x/project.json", &error));
    EXPECT_FALSE(error.isEmpty());
}

TEST(RunFolder, PastRunsAreTheFoldersWithATimelineNewestFirst) {
    QTemporaryDir root;
    const QDir runs(root.path());
    for (const char* name : {"a-old", "b-new", "c-failed"}) {
        ASSERT_TRUE(runs.mkpath(QString::fromLatin1(name)));
    }
    save_timeline_file(two_rank_timeline(0.1, 0.2),
                       runs.filePath("a-old/timeline.json").toStdString());
    save_timeline_file(two_rank_timeline(0.1, 0.2),
                       runs.filePath("b-new/timeline.json").toStdString());
    QFile metrics(runs.filePath("b-new/metrics.json"));
    ASSERT_TRUE(metrics.open(QIODevice::WriteOnly));
    RunMetrics written;
    written.iteration_time_s = 0.25;
    written.steps.resize(3);
    metrics.write(QByteArray::fromStdString(to_json(written).dump()));
    metrics.close();
    QFile old(runs.filePath("a-old/timeline.json"));
    ASSERT_TRUE(old.open(QIODevice::ReadWrite));
    old.setFileTime(QDateTime::currentDateTime().addDays(-1), QFileDevice::FileModificationTime);
    old.close();

    const auto past = list_past_runs(root.path());
    ASSERT_EQ(past.size(), 2U);  // the failed run left no timeline
    EXPECT_EQ(past[0].name, QStringLiteral("b-new"));
    EXPECT_EQ(past[0].iteration_time_s, 0.25);
    EXPECT_EQ(past[0].steps, 3);
    EXPECT_EQ(past[1].name, QStringLiteral("a-old"));
    EXPECT_FALSE(past[1].iteration_time_s.has_value());
    EXPECT_TRUE(list_past_runs(runs.filePath("missing")).empty());

    QString error;
    const auto run = load_measured_run(runs.filePath("b-new"), &error);
    ASSERT_TRUE(run.has_value()) << error.toStdString();
    EXPECT_EQ(run->timeline.events.size(), 2U);
    EXPECT_EQ(run->iteration_time_s, 0.25);
    EXPECT_FALSE(run->project.has_value());

    EXPECT_FALSE(load_measured_run(runs.filePath("c-failed"), &error).has_value());
    EXPECT_TRUE(error.contains(QStringLiteral("no timeline.json"))) << error.toStdString();
    QFile broken(runs.filePath("c-failed/timeline.json"));
    ASSERT_TRUE(broken.open(QIODevice::WriteOnly));
    broken.write("{\"format\": 3");
    broken.close();
    EXPECT_FALSE(load_measured_run(runs.filePath("c-failed"), &error).has_value());
    EXPECT_TRUE(error.contains(QStringLiteral("cannot read"))) << error.toStdString();
}

// Projects saved in one folder share its runs/: Past runs lists only the
// runs of the model on screen, and marks those of another layout (another
// model's run used to be listed, and overlaid with -96 % errors).
TEST(RunFolder, PastRunsAreThisModelsMarkedByLayout) {
    QTemporaryDir root;
    const QDir runs(root.path());
    const Project mlp = example_project();
    Project other_layout = mlp;
    other_layout.training.microbatches = 8;
    auto gpt_loaded = load_project_file(PIPEWRIGHT_ASSETS_DIR "/examples/gpt-tiny-t2p2-cpu.json");
    ASSERT_TRUE(gpt_loaded.project.has_value());
    const std::vector<std::pair<const char*, const Project*>> made{{"mlp-same", &mlp},
                                                                   {"mlp-other", &other_layout},
                                                                   {"gpt", &*gpt_loaded.project},
                                                                   {"cli", nullptr}};
    for (const auto& [name, project] : made) {
        ASSERT_TRUE(runs.mkpath(QString::fromLatin1(name)));
        save_timeline_file(
            two_rank_timeline(0.1, 0.2),
            runs.filePath(QStringLiteral("%1/timeline.json").arg(name)).toStdString());
        if (project != nullptr) {
            save_project_file(
                *project, runs.filePath(QStringLiteral("%1/project.json").arg(name)).toStdString());
        }
    }
    EXPECT_EQ(list_past_runs(root.path()).size(), 4U);  // no project to match: every run
    const auto past = list_past_runs(root.path(), &mlp);
    std::map<QString, PastRun::Plan> plans;
    for (const auto& run : past) {
        plans[run.name] = run.plan;
    }
    EXPECT_EQ(plans.size(), 3U);
    EXPECT_EQ(plans.count(QStringLiteral("gpt")), 0U);
    EXPECT_EQ(plans[QStringLiteral("mlp-same")], PastRun::Plan::same);
    EXPECT_EQ(plans[QStringLiteral("mlp-other")], PastRun::Plan::other);
    EXPECT_EQ(plans[QStringLiteral("cli")], PastRun::Plan::unrecorded);
}

// A metrics.json that does not read is named with its field when the run is
// opened; the list still shows the run, without figures.
TEST(RunFolder, AMalformedMetricsFileIsAnErrorNamingItsField) {
    QTemporaryDir root;
    const QDir runs(root.path());
    ASSERT_TRUE(runs.mkpath(QStringLiteral("r")));
    save_timeline_file(two_rank_timeline(0.1, 0.2), runs.filePath("r/timeline.json").toStdString());
    nlohmann::json metrics = to_json(RunMetrics{});
    metrics["iteration_time_s"] = "fast";
    QFile file(runs.filePath("r/metrics.json"));
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(metrics.dump()));
    file.close();

    const auto past = list_past_runs(root.path());
    ASSERT_EQ(past.size(), 1U);
    EXPECT_FALSE(past[0].iteration_time_s.has_value());
    QString error;
    EXPECT_FALSE(load_measured_run(runs.filePath("r"), &error).has_value());
    EXPECT_TRUE(error.contains(QStringLiteral("metrics.json: iteration_time_s: expected a number")))
        << error.toStdString();
}

}  // namespace
}  // namespace pipewright::gui
