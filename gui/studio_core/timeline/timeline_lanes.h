#pragma once

#include <array>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "studio_core/timeline/lane_density.h"
#include "studio_core/timeline/lane_filter.h"
#include "studio_core/timeline/lane_groups.h"
#include "studio_core/timeline/timeline_layout.h"

namespace pipewright::gui {

enum class LaneRowKind : std::uint8_t {
    caption,  // the title above the measured lanes
    header,   // an expanded group's title bar
    summary,  // a collapsed group: one lane shaded by how busy its devices are
    lane      // one device: its compute and communication rows
};

// One row of the timeline, top to bottom, in pixels from the top of all rows.
struct LaneRow {
    LaneRowKind kind = LaneRowKind::lane;
    int section = 0;  // 0: simulated, 1: measured
    int group = -1;   // header and summary: the group in the section's tree
    int rank = -1;    // lane: its rank
    int depth = 0;    // nesting, for indentation
    int devices = 0;  // header and summary: the group's lanes that pass the filter
    int first = 0;    // the ranks the row stands for: [first, end)
    int end = 0;
    double top = 0;
    double height = 0;
    [[nodiscard]] double bottom() const { return top + height; }
};

// The rows of the timeline at one moment: which lanes pass the filter, which
// groups are collapsed, how tall a lane is. Widget-free, so that the rules
// (what collapses by default, what a filter keeps, where a row sits) are
// tested without drawing. Sections: 0 the simulated timeline, 1 a measured
// one drawn under it with a caption.
class TimelineLanes {
  public:
    static constexpr int kSections = 2;
    // Lanes shorter than this cannot hold a line of text: a project whose
    // lanes would be shorter starts with its groups collapsed.
    static constexpr double kReadableLane = 14;
    static constexpr double kMinLane = 3;
    static constexpr double kMaxLane = 320;

    // `devices` empty (or `layout` null) removes the section. `represented`
    // (per lane, when given) lists every device the lane stands for: a
    // tensor-parallel group, replicas that run alike. The filter matches a
    // lane when it matches any of them, and the counts are of them.
    void setSection(int section, std::shared_ptr<const TimelineLayout> layout,
                    const std::vector<std::string>& devices,
                    std::vector<std::vector<std::string>> represented = {});
    [[nodiscard]] bool hasSection(int section) const;
    [[nodiscard]] const TimelineLayout* layout(int section) const;
    [[nodiscard]] const LaneTree& tree(int section) const;
    // True after a section got devices other than before: the caller picks
    // the collapse state again (fitTo with choose_collapse).
    [[nodiscard]] bool devicesChanged() const { return devices_changed_; }

    // Returns false when the text means the same filter as before.
    bool setFilter(const std::string& text);
    [[nodiscard]] const LaneFilter& filter() const { return filter_; }
    [[nodiscard]] const std::string& filterText() const { return filter_text_; }
    [[nodiscard]] bool passes(int section, int rank) const;
    // Devices passing the filter, and all of them, over both sections: those
    // the lanes stand for.
    [[nodiscard]] int matchingDevices() const;
    [[nodiscard]] int totalDevices() const;
    // Position of a passing lane among all passing lanes, in row order.
    [[nodiscard]] int shownIndex(int section, int rank) const;

    [[nodiscard]] bool isCollapsed(int section, int group) const;
    void setCollapsed(int section, int group, bool collapsed);
    // Every group of `depth` (0 nodes, 1 containers), or all with -1.
    void collapseAll(int depth = -1);
    void expandAll();

    // The height of a header or caption (a line of text and a margin).
    void setHeaderHeight(double pixels);
    [[nodiscard]] double headerHeight() const { return header_; }
    void setLaneHeight(double pixels);
    [[nodiscard]] double laneHeight() const { return lane_; }
    // Sizes the lanes to fill `viewport` pixels. With `choose_collapse`, first
    // picks the most detail that keeps every lane kReadableLane tall:
    // everything expanded, else containers collapsed, else nodes collapsed.
    void fitTo(double viewport, bool choose_collapse);
    // The two halves of fitTo.
    void chooseCollapse(double viewport);
    void fitLaneHeight(double viewport);
    void clearDevicesChanged() { devices_changed_ = false; }

    [[nodiscard]] const std::vector<LaneRow>& rows() const { return rows_; }
    [[nodiscard]] double contentHeight() const;
    // Rows overlapping [y0, y1): [first, last) by binary search.
    [[nodiscard]] std::pair<int, int> rowsBetween(double y0, double y1) const;
    [[nodiscard]] int rowAt(double y) const;
    // Summary and lane rows: the lanes actually drawn.
    [[nodiscard]] int drawnLanes() const;
    // The row that shows the rank: its lane, or the collapsed group holding
    // it; -1 when filtered out.
    [[nodiscard]] int rowShowing(int section, int rank) const;

    // A summary row's busy fraction per pixel column over [t0, t1] (seconds).
    [[nodiscard]] std::vector<float> summaryFractions(const LaneRow& row, double t0, double t1,
                                                      int columns) const;
    // The passing ranks of a group.
    [[nodiscard]] std::vector<int> passingRanks(int section, int first, int end) const;

  private:
    struct Section {
        std::shared_ptr<const TimelineLayout> layout;
        LaneTree tree;
        std::vector<int> passing_before;                    // prefix counts of passing ranks
        std::vector<std::vector<std::string>> represented;  // per rank, or empty
        int matching_devices = 0;
        int total_devices = 0;
        mutable std::vector<std::optional<BusyProfile>> profiles;  // per group
    };
    [[nodiscard]] int passingIn(int section, int first, int end) const;
    void applyFilter(int section);
    void rebuild();
    // What rebuild would give, without keeping it: heights of the fixed rows
    // and how many lane and summary rows there are.
    void countRows(double* fixed, int* lanes, int* summaries) const;

    std::array<Section, kSections> sections_;
    LaneFilter filter_;
    std::string filter_text_;
    std::set<std::pair<int, std::string>> collapsed_;  // (section, group key)
    double header_ = 18;
    double lane_ = 24;
    bool devices_changed_ = false;
    std::vector<LaneRow> rows_;
};

}  // namespace pipewright::gui
