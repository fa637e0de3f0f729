#include "studio_core/simulation/simulation_runner.h"

#include <gtest/gtest.h>
#include <QCoreApplication>
#include <QFutureWatcherBase>
#include <QPointer>
#include <QSignalSpy>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pipewright/core/analysis.h"
#include "pipewright/core/project_io.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::gui {
namespace {

Project example(const char* file) {
    auto loaded =
        load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / file);
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

std::vector<QPointer<QFutureWatcherBase>> jobs_of(const SimulationRunner& runner) {
    std::vector<QPointer<QFutureWatcherBase>> out;
    for (auto* job : runner.findChildren<QFutureWatcherBase*>()) {
        out.emplace_back(job);
    }
    return out;
}

// Lets every job finish and deliver its result, then runs the deletions
// that its handler scheduled.
void settle(const std::vector<QPointer<QFutureWatcherBase>>& jobs) {
    for (const auto& job : jobs) {
        if (job) {
            job->waitForFinished();
        }
    }
    QCoreApplication::processEvents();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
}

// zb-auto's lists are built once for the costs: the studio simulates and
// exports those very lists, and the figures are the command line's.
TEST(SimulationRunner, SimulatesZbAutoWithTheListsItExports) {
    const auto dir = std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / ".." / "docs" / "examples";
    auto loaded = load_project_file(dir / "four-stages-zb-auto.json");
    ASSERT_TRUE(loaded.project.has_value());
    const SimulationResult result = simulate_now(*loaded.project, dir.string());
    ASSERT_TRUE(result.report.has_value()) << result.error;
    EXPECT_EQ(result.schedule.name, "zb-auto");
    Diagnostics d;
    AnalysisOptions options;
    options.base_dir = dir;
    const auto analyzed = analyze_project(*loaded.project, options, d);
    ASSERT_TRUE(analyzed.has_value()) << d.format();
    EXPECT_NEAR(result.report->iteration_time_s,
                simulate_project(*analyzed, {}, Recording::summary).iteration_time_s, 1e-12);
    // Every compute action of the exported lists is in the simulated timeline.
    std::size_t compute = 0;
    for (const auto& rank : result.schedule.ranks) {
        for (const Action& a : rank) {
            compute += is_compute(a.type) ? 1 : 0;
        }
    }
    std::size_t simulated = 0;
    for (const auto& e : result.report->timeline.events) {
        simulated += is_compute(e.action.type) ? 1 : 0;
    }
    EXPECT_EQ(simulated, compute);
    EXPECT_GT(compute, 0U);
}

TEST(SimulationRunner, PublishesTheNewestOfManyQuickRequestsAndReleasesTheRest) {
    SimulationRunner runner;
    runner.setDebounceMs(0);
    const Project base = example("resnet50-2gpu-pipelined.json");
    QSignalSpy started(&runner, &SimulationRunner::started);
    QSignalSpy finished(&runner, &SimulationRunner::finished);
    std::vector<QPointer<QFutureWatcherBase>> jobs;
    Project last = base;
    for (int version = 1; version <= 8; ++version) {
        last.model.name = "v" + std::to_string(version);
        runner.request(last, {});
        ASSERT_TRUE(started.wait(10000));  // each request launches its own job
        for (const auto& job : jobs_of(runner)) {
            if (std::find(jobs.begin(), jobs.end(), job) == jobs.end()) {
                jobs.push_back(job);
            }
        }
    }
    EXPECT_EQ(jobs.size(), 8U);
    settle(jobs);
    ASSERT_GE(finished.count(), 1);
    ASSERT_NE(runner.latest(), nullptr);
    EXPECT_EQ(runner.latest()->project, last);
    EXPECT_FALSE(runner.busy());
    // Superseded or not, every job's watcher is gone once it has finished.
    for (const auto& job : jobs) {
        EXPECT_TRUE(job.isNull());
    }
    EXPECT_TRUE(runner.findChildren<QFutureWatcherBase*>().isEmpty());
}

TEST(SimulationRunner, CanBeDestroyedWhileSimulating) {
    auto runner = std::make_unique<SimulationRunner>();
    runner->setDebounceMs(0);
    Project project = example("resnet50-2gpu-pipelined.json");
    QSignalSpy started(runner.get(), &SimulationRunner::started);
    std::vector<QPointer<QFutureWatcherBase>> jobs;
    for (int version = 1; version <= 3; ++version) {
        project.model.name = "v" + std::to_string(version);
        runner->request(project, {});
        ASSERT_TRUE(started.wait(10000));
        for (const auto& job : jobs_of(*runner)) {
            jobs.push_back(job);
        }
    }
    ASSERT_FALSE(jobs.empty());
    runner.reset();
    for (const auto& job : jobs) {
        EXPECT_TRUE(job.isNull());
    }
    // Nothing left behind calls into the destroyed runner.
    QCoreApplication::processEvents();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
}

}  // namespace
}  // namespace pipewright::gui
