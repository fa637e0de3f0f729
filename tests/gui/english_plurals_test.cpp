// The plural endings the studio's messages choose for their count (the test
// programs install EnglishPlurals as the studio does).
#include "studio_core/format/english_plurals.h"

#include <gtest/gtest.h>
#include <QCoreApplication>

namespace pipewright::gui {
namespace {

TEST(EnglishPlurals, TheEndingFollowsTheCount) {
    EXPECT_EQ(EnglishPlurals::choose(QStringLiteral("%n layer(s) on %1"), 1),
              QStringLiteral("%n layer on %1"));
    EXPECT_EQ(EnglishPlurals::choose(QStringLiteral("%n layer(s) on %1"), 0),
              QStringLiteral("%n layers on %1"));
    EXPECT_EQ(EnglishPlurals::choose(QStringLiteral("%n micro-batch(es) · %n step(s)"), 3),
              QStringLiteral("%n micro-batches · %n steps"));
    EXPECT_EQ(EnglishPlurals::choose(QStringLiteral("no brackets (here)"), 2),
              QStringLiteral("no brackets (here)"));
}

TEST(EnglishPlurals, InstalledItMakesTrReadAsEnglish) {
    EXPECT_EQ(
        QCoreApplication::translate("Test", "The simulation stopped on %n problem(s)", nullptr, 1),
        QStringLiteral("The simulation stopped on 1 problem"));
    EXPECT_EQ(QCoreApplication::translate("Test", "%n micro-batch(es)", nullptr, 4),
              QStringLiteral("4 micro-batches"));
    // Text without a count is left alone, brackets and all.
    EXPECT_EQ(QCoreApplication::translate("Test", "time (s)"), QStringLiteral("time (s)"));
}

}  // namespace
}  // namespace pipewright::gui
