// The studio's lists and tables as item models, checked without a view:
// QAbstractItemModelTester (Qt's own consistency checks, fatal here) while
// they are filled, reset and emptied, and what each row says.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>

#include "studio_core/models/past_runs_model.h"
#include "studio_core/models/problem_list_model.h"
#include "studio_core/models/run_comparison_model.h"

namespace pipewright::gui {
namespace {

using Tester = QAbstractItemModelTester;

TEST(ProblemListModel, RowsSayPathAndMessageAndKeepThePath) {
    ProblemListModel model;
    const Tester tester(&model, Tester::FailureReportingMode::Fatal);
    EXPECT_EQ(model.rowCount(), 0);
    Diagnostics problems;
    problems.add("model.layers[1].heads", "must divide hidden 768");
    problems.add("", "the project needs a device");
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    model.setProblems(problems);
    EXPECT_EQ(resets.count(), 1);
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.index(0).data().toString(),
              QStringLiteral("model.layers[1].heads: must divide hidden 768"));
    EXPECT_EQ(model.index(0).data(ProblemListModel::PathRole).toString(),
              QStringLiteral("model.layers[1].heads"));
    // No path: the message alone, and nothing for the window to select.
    EXPECT_EQ(model.index(1).data().toString(), QStringLiteral("the project needs a device"));
    EXPECT_TRUE(model.index(1).data(ProblemListModel::PathRole).toString().isEmpty());
    model.setDecoration(QStringLiteral("icon"));
    EXPECT_EQ(model.index(1).data(Qt::DecorationRole).toString(), QStringLiteral("icon"));
    model.setProblems({});
    EXPECT_EQ(model.rowCount(), 0);
}

PastRun run(const char* name, PastRun::Plan plan, std::optional<double> iteration, int steps) {
    PastRun r;
    r.dir = QStringLiteral("/p/runs/") + QString::fromLatin1(name);
    r.name = QString::fromLatin1(name);
    r.plan = plan;
    r.iteration_time_s = iteration;
    r.steps = steps;
    return r;
}

TEST(PastRunsModel, ListsRunsAndMarksAnotherLayout) {
    PastRunsModel model;
    const Tester tester(&model, Tester::FailureReportingMode::Fatal);
    model.setOtherLayoutForeground(QStringLiteral("dimmed"));  // a brush, in the studio
    model.setRuns({run("mlp-2", PastRun::Plan::same, 0.0042, 20),
                   run("mlp-1", PastRun::Plan::other, std::nullopt, 0),
                   run("cli", PastRun::Plan::unrecorded, 0.001, 1)},
                  QStringLiteral("/p/runs"));
    ASSERT_EQ(model.rowCount(), 3);
    EXPECT_EQ(model.index(0).data().toString(),
              QStringLiteral("mlp-2\n4.20 ms per iteration · 20 steps"));
    EXPECT_FALSE(model.index(0).data(Qt::ForegroundRole).isValid());
    EXPECT_EQ(model.index(1).data().toString(), QStringLiteral("mlp-1\nanother layout"));
    EXPECT_EQ(model.index(1).data(Qt::ForegroundRole).toString(), QStringLiteral("dimmed"));
    EXPECT_TRUE(model.index(1).data(Qt::ToolTipRole).toString().contains("another layout"));
    EXPECT_TRUE(model.index(2).data(Qt::ToolTipRole).toString().contains("records no project"));
    EXPECT_EQ(model.index(2).data(PastRunsModel::DirRole).toString(),
              QStringLiteral("/p/runs/cli"));
    EXPECT_EQ(model.rowOf(QStringLiteral("/p/runs/mlp-1")), 1);
    EXPECT_EQ(model.rowOf(QStringLiteral("/p/runs/gone")), -1);
    EXPECT_TRUE(model.flags(model.index(0)) & Qt::ItemIsSelectable);
}

TEST(PastRunsModel, NoRunsIsOneRowThatCannotBePicked) {
    PastRunsModel model;
    const Tester tester(&model, Tester::FailureReportingMode::Fatal);
    model.setRuns({}, QStringLiteral("/p/runs"));
    ASSERT_EQ(model.rowCount(), 1);
    EXPECT_EQ(model.index(0).data().toString(), QStringLiteral("No runs of this project yet"));
    EXPECT_EQ(model.index(0).data(Qt::ToolTipRole).toString(),
              QStringLiteral("Runs are kept in /p/runs"));
    EXPECT_EQ(model.flags(model.index(0)), Qt::NoItemFlags);
    EXPECT_TRUE(model.index(0).data(PastRunsModel::DirRole).toString().isEmpty());
    EXPECT_TRUE(model.runs().empty());
    EXPECT_EQ(model.rowOf(QString()), -1);
}

RunComparisonRow compared(const char* what, std::optional<double> simulated,
                          std::optional<double> measured) {
    RunComparisonRow row;
    row.what = QString::fromLatin1(what);
    row.simulated_s = simulated;
    row.measured_s = measured;
    return row;
}

TEST(RunComparisonModel, ShowsTimesAndTheErrorAndFlagsThoseFarOff) {
    RunComparisonModel model;
    const Tester tester(&model, Tester::FailureReportingMode::Fatal);
    model.setFarOffForeground(QStringLiteral("warning"));  // a colour, in the studio
    model.setRows({compared("Iteration time", 0.012, 0.010), compared("Busy cpu1", 0.004, 0.010),
                   compared("Median forward (F)", std::nullopt, 0.001)});
    ASSERT_EQ(model.rowCount(), 3);
    ASSERT_EQ(model.columnCount(), 4);
    const auto text = [&model](int r, int c) { return model.index(r, c).data().toString(); };
    EXPECT_EQ(text(0, RunComparisonModel::what), QStringLiteral("Iteration time"));
    EXPECT_EQ(text(0, RunComparisonModel::simulated), QStringLiteral("12.0 ms"));
    EXPECT_EQ(text(0, RunComparisonModel::measured), QStringLiteral("10.0 ms"));
    EXPECT_EQ(text(0, RunComparisonModel::error), QStringLiteral("+20.0 %"));
    EXPECT_FALSE(model.index(0, RunComparisonModel::error).data(Qt::ForegroundRole).isValid());
    // −60 %: more than half off, in the warning colour with a reason.
    EXPECT_EQ(text(1, RunComparisonModel::error), QStringLiteral("-60.0 %"));
    const QModelIndex far = model.index(1, RunComparisonModel::error);
    EXPECT_TRUE(far.data(RunComparisonModel::FarOffRole).toBool());
    EXPECT_EQ(far.data(Qt::ForegroundRole).toString(), QStringLiteral("warning"));
    EXPECT_FALSE(far.data(Qt::ToolTipRole).toString().isEmpty());
    // Nothing simulated: no error either.
    EXPECT_EQ(text(2, RunComparisonModel::simulated), QStringLiteral("—"));
    EXPECT_EQ(text(2, RunComparisonModel::error), QStringLiteral("—"));
    EXPECT_EQ(model.headerData(RunComparisonModel::error, Qt::Horizontal, Qt::DisplayRole),
              QStringLiteral("Error"));
    EXPECT_FALSE(model.headerData(RunComparisonModel::error, Qt::Horizontal, Qt::ToolTipRole)
                     .toString()
                     .isEmpty());
    EXPECT_TRUE(model.headerData(RunComparisonModel::measured, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("median")));
    model.setRows({});
    EXPECT_EQ(model.rowCount(), 0);
}

}  // namespace
}  // namespace pipewright::gui
