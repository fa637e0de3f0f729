#include "studio_core/simulation/plan_runner.h"

#include <gtest/gtest.h>
#include <QCoreApplication>
#include <QFutureWatcherBase>
#include <QPointer>
#include <QSignalSpy>
#include <filesystem>
#include <memory>
#include <vector>

#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"

namespace pipewright::gui {
namespace {

Project example(const char* file) {
    auto loaded =
        load_project_file(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "examples" / file);
    EXPECT_TRUE(loaded.project.has_value());
    return *loaded.project;
}

std::vector<QPointer<QFutureWatcherBase>> jobs_of(const PlanRunner& runner) {
    std::vector<QPointer<QFutureWatcherBase>> out;
    for (auto* job : runner.findChildren<QFutureWatcherBase*>()) {
        out.emplace_back(job);
    }
    return out;
}

// Lets every plan, stopped or not, end and deliver what it has.
void settle(const std::vector<QPointer<QFutureWatcherBase>>& jobs) {
    for (const auto& job : jobs) {
        if (job) {
            job->waitForFinished();
        }
    }
    QCoreApplication::processEvents();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
}

TEST(PlanRunner, PublishesAFinishedPlanWithTheProjectItStartedFrom) {
    PlanRunner runner;
    const Project project = example("resnet50-2gpu-pipelined.json");
    QSignalSpy finished(&runner, &PlanRunner::finished);
    QSignalSpy progress(&runner, &PlanRunner::progress);
    runner.start(project, {});
    EXPECT_TRUE(runner.isRunning());
    ASSERT_TRUE(finished.wait(60000));
    EXPECT_FALSE(runner.isRunning());
    ASSERT_NE(runner.latest(), nullptr);
    EXPECT_EQ(runner.latest()->input, project);
    ASSERT_TRUE(runner.latest()->result.has_value());
    EXPECT_TRUE(runner.latest()->result->feasible);
    EXPECT_NE(runner.latest()->result->project.placement, project.placement);
    // ResNet-50's kernels in micro-batches of 20 or so are shorter than an
    // eager framework's host issues them: the attempt says so for the plan.
    EXPECT_NE(runner.latest()->host_pace.find("likely paced by its host"), std::string::npos)
        << runner.latest()->host_pace;
    // Progress is posted before the result, so all of it has arrived.
    ASSERT_GT(progress.count(), 0);
    EXPECT_LE(progress.last().at(0).toInt(), runner.latest()->result->statistics.simulations);
}

// Measured layers have no kernels to judge: a plan priced by a profile of
// every layer says nothing of the host.
TEST(PlanRunner, APlanPricedByMeasuredLayersSaysNothingOfTheHost) {
    PlanRunner runner;
    const Project project = example("resnet50-2gpu-pipelined.json");
    auto profile = std::make_shared<Profile>();
    profile->microbatch_size = 20;
    for (const LayerSpec& layer : project.model.layers) {
        profile->layers.push_back({layer.name, 0.5, 0.5, 0.5, std::nullopt});
    }
    QSignalSpy finished(&runner, &PlanRunner::finished);
    runner.start(project, {}, StudioCosts(profile));
    ASSERT_TRUE(finished.wait(60000));
    ASSERT_TRUE(runner.latest()->result && runner.latest()->result->feasible);
    EXPECT_TRUE(runner.latest()->host_pace.empty()) << runner.latest()->host_pace;
}

TEST(PlanRunner, ACancelledPlanIsNeverPublished) {
    PlanRunner runner;
    QSignalSpy finished(&runner, &PlanRunner::finished);
    QSignalSpy failed(&runner, &PlanRunner::failed);
    QSignalSpy cancelled(&runner, &PlanRunner::cancelled);
    runner.start(example("resnet50-2gpu-pipelined.json"), {});
    const auto jobs = jobs_of(runner);
    ASSERT_EQ(jobs.size(), 1U);
    runner.cancel();
    EXPECT_EQ(cancelled.count(), 1);
    EXPECT_FALSE(runner.isRunning());
    settle(jobs);
    EXPECT_EQ(finished.count(), 0);
    EXPECT_EQ(failed.count(), 0);
    EXPECT_EQ(runner.latest(), nullptr);
    EXPECT_TRUE(jobs.front().isNull());
    // Cancelling when nothing runs says nothing.
    runner.cancel();
    EXPECT_EQ(cancelled.count(), 1);
}

TEST(PlanRunner, ANewerPlanSupersedesTheRunningOne) {
    PlanRunner runner;
    QSignalSpy finished(&runner, &PlanRunner::finished);
    const Project first = example("resnet50-2gpu-pipelined.json");
    Project second = first;
    second.training.batch_size = 2 * first.training.batch_size;
    runner.start(first, {});
    runner.start(second, {});
    const auto jobs = jobs_of(runner);
    EXPECT_EQ(jobs.size(), 2U);
    settle(jobs);
    ASSERT_EQ(finished.count(), 1);
    EXPECT_EQ(runner.latest()->input, second);
}

TEST(PlanRunner, SaysWhyAProjectCannotBePlanned) {
    PlanRunner runner;
    QSignalSpy finished(&runner, &PlanRunner::finished);
    QSignalSpy failed(&runner, &PlanRunner::failed);
    Project project = example("resnet50-2gpu-pipelined.json");
    project.training.batch_size = 0;
    runner.start(project, {});
    ASSERT_TRUE(failed.wait(60000));
    EXPECT_TRUE(failed.front().at(0).toString().contains(QStringLiteral("at least 1")))
        << failed.front().at(0).toString().toStdString();
    EXPECT_EQ(finished.count(), 0);
    EXPECT_FALSE(runner.latest()->result.has_value());
}

TEST(PlanRunner, CanBeDestroyedWhilePlanning) {
    auto runner = std::make_unique<PlanRunner>();
    runner->start(example("gpt3-175b-p4d.json"), {});
    const auto jobs = jobs_of(*runner);
    ASSERT_EQ(jobs.size(), 1U);
    runner.reset();
    EXPECT_TRUE(jobs.front().isNull());
    // Progress posted by the stopped plan is not delivered to the dead runner.
    QCoreApplication::processEvents();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
}

}  // namespace
}  // namespace pipewright::gui
