// The timeline's lanes at cluster scale: grouping by node and container, the
// lane filter, which rows are drawn and where, the busy density of collapsed
// groups, and the label rules.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "studio_core/timeline/label_fit.h"
#include "studio_core/timeline/lane_density.h"
#include "studio_core/timeline/lane_filter.h"
#include "studio_core/timeline/lane_groups.h"
#include "studio_core/timeline/timeline_lanes.h"

namespace pipewright::gui {
namespace {

// `nodes` nodes of `per_node` devices in one container each, one forward
// block per rank, staggered as in a pipeline (rank r busy [r, r + 1) ms).
Timeline cluster(int nodes, int per_node, int containers_per_node = 1) {
    Timeline t;
    const int per_container = per_node / containers_per_node;
    for (int n = 0; n < nodes; ++n) {
        for (int d = 0; d < per_node; ++d) {
            t.devices.push_back("node" + std::to_string(n) + "/c" +
                                std::to_string(d / per_container) + "/gpu" + std::to_string(d));
        }
    }
    for (int r = 0; r < t.num_ranks(); ++r) {
        t.events.push_back({r, Action{r, ActionType::forward, 0}, r * 1e-3, (r + 1) * 1e-3});
    }
    return t;
}

TEST(LaneTree, GroupsLanesByNodeAndContainer) {
    const LaneTree tree(cluster(2, 4, 2).devices);
    // Two nodes, each with two containers of two devices.
    ASSERT_EQ(tree.groups().size(), 6u);
    EXPECT_EQ(tree.nodeCount(), 2);
    EXPECT_EQ(tree.group(0).key, "node0");
    EXPECT_EQ(tree.group(0).size(), 4);
    EXPECT_EQ(tree.group(1).key, "node0/c0");
    EXPECT_EQ(tree.group(1).parent, 0);
    EXPECT_EQ(tree.group(2).name, "c1");
    EXPECT_EQ(tree.group(3).first_rank, 4);
    EXPECT_EQ(tree.laneName(3), "gpu3");
    EXPECT_EQ(tree.groupOf(3), 2);
}

TEST(LaneTree, LeavesOutContainersThatGroupNothing) {
    // One container per node: its header would repeat the node's.
    const LaneTree one(cluster(3, 8).devices);
    EXPECT_EQ(one.groups().size(), 3u);
    EXPECT_EQ(one.laneName(9), "gpu1");
    // Containers of one device each, and devices outside any node.
    const LaneTree mixed({"node0/c0/gpu0", "node0/c1/gpu0", "node1/c0/gpu0", "cpu"});
    EXPECT_EQ(mixed.groups().size(), 2u);
    EXPECT_EQ(mixed.laneName(1), "c1/gpu0");
    EXPECT_EQ(mixed.groupOf(3), -1);
    EXPECT_EQ(mixed.laneName(3), "cpu");
}

TEST(LaneTree, KeepsPipelineOrderWhenANodeComesBack) {
    const LaneTree tree({"a/c/g0", "b/c/g0", "a/c/g1"});
    ASSERT_EQ(tree.groups().size(), 3u);
    EXPECT_EQ(tree.group(0).key, "a");
    EXPECT_EQ(tree.group(2).key, "a#2");
    EXPECT_EQ(tree.group(2).name, "a");
    EXPECT_EQ(tree.group(2).first_rank, 2);
}

TEST(LaneFilter, MatchesNamesNodesAndRankRanges) {
    const auto devices = cluster(12, 8).devices;
    auto count = [&](const std::string& text) {
        const LaneFilter f = LaneFilter::parse(text);
        int n = 0;
        for (int r = 0; r < static_cast<int>(devices.size()); ++r) {
            n += f.matches(r, devices[static_cast<std::size_t>(r)]) ? 1 : 0;
        }
        return n;
    };
    EXPECT_EQ(count(""), 96);
    EXPECT_EQ(count("8-15"), 8);
    EXPECT_EQ(count("90-"), 6);
    EXPECT_EQ(count("3"), 1);
    EXPECT_EQ(count("GPU3"), 12);         // a name, case ignored
    EXPECT_EQ(count("node1"), 3 * 8);     // node1, node10, node11
    EXPECT_EQ(count("node1/"), 8);        // node1 only
    EXPECT_EQ(count("node1/, 0-1"), 10);  // any term
    EXPECT_TRUE(LaneFilter::parse("8-15 gpu").error().empty());
}

TEST(LaneFilter, SaysWhatItDidNotUnderstand) {
    const LaneFilter backwards = LaneFilter::parse("15-8");
    EXPECT_NE(backwards.error().find("15-8"), std::string::npos);
    EXPECT_TRUE(backwards.empty());  // nothing understood: every lane stays
    const LaneFilter huge = LaneFilter::parse("99999999999 gpu");
    EXPECT_FALSE(huge.error().empty());
    EXPECT_TRUE(huge.matches(0, "node0/c0/gpu0"));
}

TEST(TimelineLanes, ClusterScaleStartsCollapsedToOneLanePerNode) {
    const Timeline t = cluster(128, 8);  // 1,024 devices
    TimelineLanes lanes;
    lanes.setSection(0, std::make_shared<TimelineLayout>(t), t.devices);
    lanes.fitTo(600, true);
    EXPECT_EQ(lanes.drawnLanes(), 128);
    for (const LaneRow& row : lanes.rows()) {
        EXPECT_EQ(row.kind, LaneRowKind::summary);
        EXPECT_EQ(row.devices, 8);
    }
    EXPECT_GE(lanes.laneHeight(), TimelineLanes::kReadableLane);
    // More rows than fit: the view scrolls, and only what is on screen is visited.
    EXPECT_GT(lanes.contentHeight(), 600);
    const auto [first, last] = lanes.rowsBetween(100, 300);
    EXPECT_GT(first, 0);
    EXPECT_LE(last - first, 200 / static_cast<int>(TimelineLanes::kReadableLane) + 2);
    EXPECT_EQ(lanes.rowAt(lanes.rows()[5].top + 1), 5);

    // Expanding one node shows its header and its eight lanes.
    lanes.setCollapsed(0, 3, false);
    EXPECT_EQ(lanes.drawnLanes(), 127 + 8);
    EXPECT_EQ(lanes.rows()[3].kind, LaneRowKind::header);
    EXPECT_EQ(lanes.rows()[4].rank, 24);
    EXPECT_EQ(lanes.rowShowing(0, 30), 4 + 6);
    EXPECT_EQ(lanes.rowShowing(0, 40), 3 + 1 + 8 + 1);  // inside node 5's summary
}

TEST(TimelineLanes, ALaneStandingForAGroupMatchesAndCountsEveryDeviceOfIt) {
    // GPT-3 on 1,024 GPUs: 8 lanes (one replica's stages), each standing for
    // a tensor group of 8 in its replica and the 15 replicas that run alike.
    Timeline t;
    std::vector<std::vector<std::string>> stands_for(8);
    for (int stage = 0; stage < 8; ++stage) {
        t.devices.push_back("node" + std::to_string(stage) + "/c0/gpu0");
        t.events.push_back({stage, Action{stage, ActionType::forward, 0}, 0, 1e-3});
        for (int replica = 0; replica < 16; ++replica) {
            for (int gpu = 0; gpu < 8; ++gpu) {
                stands_for[static_cast<std::size_t>(stage)].push_back(
                    "node" + std::to_string(replica * 8 + stage) + "/c0/gpu" + std::to_string(gpu));
            }
        }
    }
    TimelineLanes lanes;
    lanes.setSection(0, std::make_shared<TimelineLayout>(t), t.devices, stands_for);
    EXPECT_EQ(lanes.totalDevices(), 1024);
    EXPECT_EQ(lanes.matchingDevices(), 1024);
    lanes.setFilter("gpu3");  // no lane is named so, every lane holds some
    EXPECT_EQ(lanes.drawnLanes(), 8);
    EXPECT_EQ(lanes.matchingDevices(), 128);
    lanes.setFilter("node100/");  // replica 12's fifth stage
    EXPECT_EQ(lanes.drawnLanes(), 1);
    EXPECT_TRUE(lanes.passes(0, 4));
    EXPECT_EQ(lanes.matchingDevices(), 8);
    lanes.setFilter("2-3");  // rank terms still number the lanes
    EXPECT_EQ(lanes.drawnLanes(), 2);
    EXPECT_EQ(lanes.matchingDevices(), 256);
}

TEST(TimelineLanes, AnEmptyTimelineHasNoRows) {
    TimelineLanes lanes;
    EXPECT_EQ(lanes.matchingDevices(), 0);
    EXPECT_EQ(lanes.totalDevices(), 0);
    lanes.setFilter("gpu");
    lanes.fitTo(400, true);
    EXPECT_TRUE(lanes.rows().empty());
    EXPECT_EQ(lanes.rowAt(10), -1);
    EXPECT_EQ(lanes.contentHeight(), 0);
}

TEST(TimelineLanes, SmallProjectsStayExpandedAndFillTheView) {
    const Timeline t = cluster(2, 2);
    TimelineLanes lanes;
    lanes.setSection(0, std::make_shared<TimelineLayout>(t), t.devices);
    lanes.fitTo(500, true);
    EXPECT_EQ(lanes.drawnLanes(), 4);
    EXPECT_NEAR(lanes.contentHeight(), 500, 1);
    // Vertical zoom is bounded both ways.
    lanes.setLaneHeight(1);
    EXPECT_EQ(lanes.laneHeight(), TimelineLanes::kMinLane);
    lanes.setLaneHeight(1e6);
    EXPECT_EQ(lanes.laneHeight(), TimelineLanes::kMaxLane);
}

TEST(TimelineLanes, FilterKeepsMatchingLanesAndTheirGroups) {
    const Timeline t = cluster(16, 8);
    TimelineLanes lanes;
    lanes.setSection(0, std::make_shared<TimelineLayout>(t), t.devices);
    lanes.setSection(1, std::make_shared<TimelineLayout>(t), t.devices);  // measured
    EXPECT_EQ(lanes.totalDevices(), 256);
    EXPECT_TRUE(lanes.setFilter("8-15"));
    EXPECT_FALSE(lanes.setFilter("8-15"));
    lanes.fitTo(600, true);
    EXPECT_EQ(lanes.matchingDevices(), 16);  // simulated and measured
    // Eight lanes fit: both node1 groups are expanded, under one caption.
    EXPECT_EQ(lanes.drawnLanes(), 16);
    int captions = 0;
    for (const LaneRow& row : lanes.rows()) {
        captions += row.kind == LaneRowKind::caption ? 1 : 0;
        if (row.kind == LaneRowKind::lane) {
            EXPECT_GE(row.rank, 8);
            EXPECT_LE(row.rank, 15);
        }
    }
    EXPECT_EQ(captions, 1);
    EXPECT_EQ(lanes.shownIndex(1, 8), 8);
    // A filter that a collapsed group only partly passes: its summary counts
    // the passing devices alone.
    lanes.setFilter("gpu0");
    lanes.collapseAll();
    EXPECT_EQ(lanes.drawnLanes(), 32);
    EXPECT_EQ(lanes.rows()[0].devices, 1);
    lanes.setFilter("nothing-like-this");
    EXPECT_EQ(lanes.drawnLanes(), 0);
}

TEST(BusyProfile, GivesTheFractionOfDevicesBusyPerColumn) {
    Timeline t = cluster(1, 4);
    // Ranks 0-3 busy [r, r + 1) ms: in [0, 4) ms one of four is always busy.
    const TimelineLayout layout(t);
    const BusyProfile all(layout, {0, 1, 2, 3});
    EXPECT_NEAR(all.busyBetween(0, 4e-3), 4e-3, 1e-12);
    const auto f = all.fractions(0, 4e-3, 8);
    ASSERT_EQ(f.size(), 8u);
    for (float x : f) {
        EXPECT_NEAR(x, 0.25, 1e-5);
    }
    const BusyProfile two(layout, {0, 1});
    const auto g = two.fractions(0, 4e-3, 4);
    EXPECT_NEAR(g[0], 0.5, 1e-5);
    EXPECT_NEAR(g[1], 0.5, 1e-5);
    EXPECT_NEAR(g[2], 0.0, 1e-5);
    // A window that starts inside a block.
    const auto h = two.fractions(0.5e-3, 1.5e-3, 2);
    EXPECT_NEAR(h[0], 0.5, 1e-5);
    EXPECT_NEAR(h[1], 0.5, 1e-5);
}

TEST(BusyProfile, DirectFractionsEqualTheProfiles) {
    // Uneven blocks on five ranks, some wider than a column, some narrower,
    // some cut by the window's edges.
    Timeline t;
    t.devices = {"a", "b", "c", "d", "e"};
    for (int rank = 0; rank < 5; ++rank) {
        double at = 0.1 * rank;
        for (int i = 0; i < 40; ++i) {
            const double length = 0.05 + 0.37 * ((i * 7 + rank * 3) % 11) / 11.0;
            t.events.push_back({rank, Action{0, ActionType::forward, i}, at, at + length});
            at += length + 0.03 * ((i + rank) % 4);
        }
    }
    const TimelineLayout layout(t);
    for (const std::vector<int>& ranks :
         {std::vector<int>{0, 1, 2, 3, 4}, std::vector<int>{1, 3}}) {
        for (const auto& [t0, t1, columns] :
             {std::tuple{0.0, 12.0, 97}, std::tuple{1.3, 2.9, 40}, std::tuple{0.0, 12.0, 3}}) {
            const auto expected = BusyProfile(layout, ranks).fractions(t0, t1, columns);
            const auto direct = busy_fractions(layout, ranks, t0, t1, columns);
            ASSERT_EQ(direct.size(), expected.size());
            for (std::size_t c = 0; c < direct.size(); ++c) {
                EXPECT_NEAR(direct[c], expected[c], 1e-4) << "column " << c;
            }
        }
    }
    EXPECT_TRUE(busy_fractions(layout, {}, 0, 1, 4) == std::vector<float>(4, 0.0F));
}

TEST(PaintRow, FoldsBlocksNarrowerThanAPixelIntoColumns) {
    Timeline t;
    t.devices = {"a"};
    for (int i = 0; i < 10000; ++i) {  // 0.1 ms blocks with 0.1 ms gaps
        t.events.push_back({0, Action{0, i % 2 ? ActionType::backward : ActionType::forward, i},
                            i * 2e-4, i * 2e-4 + 1e-4});
    }
    const TimelineLayout layout(t);
    RowPaint paint;
    // 2 s on 1,000 columns: 2 ms per pixel, ten blocks per column.
    paint_row(layout, 0, 0, 2.0, 1000, 2, &paint);
    EXPECT_TRUE(paint.boxes.empty());
    ASSERT_EQ(paint.columns.size(), 1000u);
    for (const ColumnCover& c : paint.columns) {
        EXPECT_NEAR(c.cover, 0.5, 0.01);
    }
    // Zoomed in to 2 ms: every block is a box of its own.
    paint_row(layout, 0, 1.0, 1.002, 1000, 2, &paint);
    EXPECT_TRUE(paint.columns.empty());
    EXPECT_GE(paint.boxes.size(), 10u);
    EXPECT_LE(paint.boxes.size(), 12u);
}

TEST(LabelFit, DrawsWhatFitsAndNeverOverlaps) {
    EXPECT_TRUE(lane_label_fits(14, 13));
    EXPECT_FALSE(lane_label_fits(5, 13));
    EXPECT_EQ(fit_label(40, {50, 30, 10}), 1);
    EXPECT_EQ(fit_label(8, {50, 30, 10}), -1);
    const std::vector<QRectF> rects = {
        {0, 0, 50, 10}, {40, 5, 50, 10}, {50, 0, 10, 10}, {0, 10, 50, 10}};
    const auto kept = cull_overlapping(rects);
    EXPECT_EQ(kept, (std::vector<int>{0, 2, 3}));
    std::vector<QRectF> drawn;
    for (int k : kept) {
        drawn.push_back(rects[static_cast<std::size_t>(k)]);
    }
    EXPECT_TRUE(none_overlap(drawn));
    EXPECT_FALSE(none_overlap(rects));
}

}  // namespace
}  // namespace pipewright::gui
