#include "studio_core/timeline/timeline_lanes.h"

#include <algorithm>
#include <functional>

namespace pipewright::gui {

namespace {

// Rows of one section, in order: a group's header (or its summary when
// collapsed) comes before its lanes; groups whose lanes are all filtered out
// are left out.
template <typename Emit>
void walk_section(const LaneTree& tree, int section, const std::function<int(int, int)>& passing,
                  const std::function<bool(int)>& collapsed, Emit&& emit) {
    const int n = tree.ranks();
    auto node_of = [&](int r) {
        const int g = tree.groupOf(r);
        return g >= 0 && tree.group(g).depth == 1 ? tree.group(g).parent : g;
    };
    auto container_of = [&](int r) {
        const int g = tree.groupOf(r);
        return g >= 0 && tree.group(g).depth == 1 ? g : -1;
    };
    auto group_row = [&](int g, int depth, int count) {
        const LaneGroup& group = tree.group(g);
        LaneRow row;
        row.kind = collapsed(g) ? LaneRowKind::summary : LaneRowKind::header;
        row.section = section;
        row.group = g;
        row.depth = depth;
        row.devices = count;
        row.first = group.first_rank;
        row.end = group.end_rank;
        emit(row);
        return row.kind == LaneRowKind::header;
    };
    auto lane_row = [&](int r, int depth) {
        if (passing(r, r + 1) == 0) {
            return;
        }
        LaneRow row;
        row.kind = LaneRowKind::lane;
        row.section = section;
        row.rank = r;
        row.depth = depth;
        row.first = r;
        row.end = r + 1;
        emit(row);
    };
    int r = 0;
    while (r < n) {
        const int node = node_of(r);
        if (node < 0) {
            lane_row(r, 0);
            ++r;
            continue;
        }
        const LaneGroup& g = tree.group(node);
        const int count = passing(g.first_rank, g.end_rank);
        if (count > 0 && group_row(node, 0, count)) {
            for (int c = g.first_rank; c < g.end_rank;) {
                const int container = container_of(c);
                if (container < 0) {
                    lane_row(c, 1);
                    ++c;
                    continue;
                }
                const LaneGroup& cg = tree.group(container);
                const int inside = passing(cg.first_rank, cg.end_rank);
                if (inside > 0 && group_row(container, 1, inside)) {
                    for (int d = cg.first_rank; d < cg.end_rank; ++d) {
                        lane_row(d, 2);
                    }
                }
                c = cg.end_rank;
            }
        }
        r = g.end_rank;
    }
}

}  // namespace

void TimelineLanes::setSection(int section, std::shared_ptr<const TimelineLayout> layout,
                               const std::vector<std::string>& devices,
                               std::vector<std::vector<std::string>> represented) {
    Section& s = sections_.at(static_cast<std::size_t>(section));
    std::vector<std::string> before;
    for (int r = 0; r < s.tree.ranks(); ++r) {
        before.push_back(s.tree.device(r));
    }
    if (layout == nullptr || devices.empty()) {
        s = Section{};
    } else {
        s.layout = std::move(layout);
        s.tree = LaneTree(devices);
        s.represented = represented.size() == devices.size()
                            ? std::move(represented)
                            : std::vector<std::vector<std::string>>{};
    }
    if (before != devices) {
        devices_changed_ = true;
        // Collapse state belongs to the groups that were there.
        for (auto it = collapsed_.begin(); it != collapsed_.end();) {
            it = it->first == section ? collapsed_.erase(it) : std::next(it);
        }
    }
    applyFilter(section);
    rebuild();
}

bool TimelineLanes::hasSection(int section) const {
    return sections_.at(static_cast<std::size_t>(section)).tree.ranks() > 0;
}

const TimelineLayout* TimelineLanes::layout(int section) const {
    return sections_.at(static_cast<std::size_t>(section)).layout.get();
}

const LaneTree& TimelineLanes::tree(int section) const {
    return sections_.at(static_cast<std::size_t>(section)).tree;
}

bool TimelineLanes::setFilter(const std::string& text) {
    if (text == filter_text_) {
        return false;
    }
    filter_text_ = text;
    filter_ = LaneFilter::parse(text);
    for (int s = 0; s < kSections; ++s) {
        applyFilter(s);
    }
    rebuild();
    return true;
}

void TimelineLanes::applyFilter(int section) {
    Section& s = sections_.at(static_cast<std::size_t>(section));
    const int n = s.tree.ranks();
    s.passing_before.assign(static_cast<std::size_t>(n + 1), 0);
    s.matching_devices = 0;
    s.total_devices = 0;
    for (int r = 0; r < n; ++r) {
        bool passes = filter_.matches(r, s.tree.device(r));
        int matching = passes ? 1 : 0;
        int total = 1;
        if (!s.represented.empty()) {
            const auto& stands_for = s.represented[static_cast<std::size_t>(r)];
            total = static_cast<int>(stands_for.size());
            matching = 0;
            for (const std::string& device : stands_for) {
                matching += filter_.matches(r, device) ? 1 : 0;
            }
            passes = matching > 0;
        }
        s.matching_devices += matching;
        s.total_devices += total;
        s.passing_before[static_cast<std::size_t>(r + 1)] =
            s.passing_before[static_cast<std::size_t>(r)] + (passes ? 1 : 0);
    }
    s.profiles.assign(s.tree.groups().size(), std::nullopt);
}

int TimelineLanes::passingIn(int section, int first, int end) const {
    const auto& before = sections_.at(static_cast<std::size_t>(section)).passing_before;
    if (before.empty()) {
        return 0;  // a section never set
    }
    return before.at(static_cast<std::size_t>(end)) - before.at(static_cast<std::size_t>(first));
}

bool TimelineLanes::passes(int section, int rank) const {
    return passingIn(section, rank, rank + 1) > 0;
}

int TimelineLanes::matchingDevices() const {
    int n = 0;
    for (const Section& s : sections_) {
        n += s.matching_devices;
    }
    return n;
}

int TimelineLanes::totalDevices() const {
    int n = 0;
    for (const Section& s : sections_) {
        n += s.total_devices;
    }
    return n;
}

int TimelineLanes::shownIndex(int section, int rank) const {
    int index = passingIn(section, 0, rank);
    for (int s = 0; s < section; ++s) {
        index += passingIn(s, 0, tree(s).ranks());
    }
    return index;
}

bool TimelineLanes::isCollapsed(int section, int group) const {
    return collapsed_.count({section, tree(section).group(group).key}) > 0;
}

void TimelineLanes::setCollapsed(int section, int group, bool collapsed) {
    const std::pair<int, std::string> key{section, tree(section).group(group).key};
    if (collapsed) {
        collapsed_.insert(key);
    } else {
        collapsed_.erase(key);
    }
    rebuild();
}

void TimelineLanes::collapseAll(int depth) {
    for (int s = 0; s < kSections; ++s) {
        for (const LaneGroup& g : tree(s).groups()) {
            if (depth < 0 || g.depth == depth) {
                collapsed_.insert({s, g.key});
            }
        }
    }
    rebuild();
}

void TimelineLanes::expandAll() {
    collapsed_.clear();
    rebuild();
}

void TimelineLanes::setHeaderHeight(double pixels) {
    header_ = std::max(8.0, pixels);
    rebuild();
}

void TimelineLanes::setLaneHeight(double pixels) {
    lane_ = std::clamp(pixels, kMinLane, kMaxLane);
    rebuild();
}

void TimelineLanes::countRows(double* fixed, int* lanes, int* summaries) const {
    *fixed = 0;
    *lanes = 0;
    *summaries = 0;
    for (int s = 0; s < kSections; ++s) {
        if (!hasSection(s)) {
            continue;
        }
        if (s > 0) {
            *fixed += header_ + 6;  // the caption
        }
        walk_section(
            tree(s), s, [&](int a, int b) { return passingIn(s, a, b); },
            [&](int g) { return isCollapsed(s, g); },
            [&](const LaneRow& row) {
                if (row.kind == LaneRowKind::header) {
                    *fixed += header_;
                } else if (row.kind == LaneRowKind::summary) {
                    ++*summaries;
                } else {
                    ++*lanes;
                }
            });
    }
}

void TimelineLanes::fitTo(double viewport, bool choose_collapse) {
    if (choose_collapse) {
        chooseCollapse(viewport);
    }
    fitLaneHeight(viewport);
}

void TimelineLanes::chooseCollapse(double viewport) {
    double fixed = 0;
    int lanes = 0;
    int summaries = 0;
    auto needed = [&] {
        countRows(&fixed, &lanes, &summaries);
        return fixed + lanes * kReadableLane + summaries * std::max(kReadableLane, header_);
    };
    devices_changed_ = false;
    collapsed_.clear();
    if (needed() > viewport) {
        collapseAll(1);
        if (needed() > viewport) {
            collapseAll(-1);
        }
    }
    rebuild();
}

void TimelineLanes::fitLaneHeight(double viewport) {
    double fixed = 0;
    int lanes = 0;
    int summaries = 0;
    countRows(&fixed, &lanes, &summaries);
    const double room = viewport - fixed;
    double lane = kReadableLane;
    if (lanes + summaries > 0 && room > 0) {
        lane = room / (lanes + summaries);
        if (lane < header_ && summaries > 0) {
            // Summaries are never lower than a header: the lanes share the rest.
            lane = lanes > 0 ? (room - summaries * header_) / lanes : header_;
        }
    }
    lane_ = std::clamp(lane, kReadableLane, kMaxLane);
    rebuild();
}

void TimelineLanes::rebuild() {
    rows_.clear();
    double y = 0;
    for (int s = 0; s < kSections; ++s) {
        if (!hasSection(s)) {
            continue;
        }
        if (s > 0) {
            LaneRow caption;
            caption.kind = LaneRowKind::caption;
            caption.section = s;
            caption.top = y;
            caption.height = header_ + 6;
            y += caption.height;
            rows_.push_back(caption);
        }
        walk_section(
            tree(s), s, [&](int a, int b) { return passingIn(s, a, b); },
            [&](int g) { return isCollapsed(s, g); },
            [&](LaneRow row) {
                row.top = y;
                row.height = row.kind == LaneRowKind::header    ? header_
                             : row.kind == LaneRowKind::summary ? std::max(lane_, header_)
                                                                : lane_;
                y += row.height;
                rows_.push_back(row);
            });
    }
}

double TimelineLanes::contentHeight() const {
    return rows_.empty() ? 0 : rows_.back().bottom();
}

std::pair<int, int> TimelineLanes::rowsBetween(double y0, double y1) const {
    const auto first = std::upper_bound(rows_.begin(), rows_.end(), y0,
                                        [](double y, const LaneRow& r) { return y < r.bottom(); });
    const auto last = std::lower_bound(first, rows_.end(), y1,
                                       [](const LaneRow& r, double y) { return r.top < y; });
    return {static_cast<int>(first - rows_.begin()), static_cast<int>(last - rows_.begin())};
}

int TimelineLanes::rowAt(double y) const {
    const auto [first, last] = rowsBetween(y, y);
    if (first < static_cast<int>(rows_.size()) && rows_[static_cast<std::size_t>(first)].top <= y &&
        y < rows_[static_cast<std::size_t>(first)].bottom()) {
        return first;
    }
    (void)last;
    return -1;
}

int TimelineLanes::drawnLanes() const {
    return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const LaneRow& r) {
        return r.kind == LaneRowKind::lane || r.kind == LaneRowKind::summary;
    }));
}

int TimelineLanes::rowShowing(int section, int rank) const {
    if (!passes(section, rank)) {
        return -1;
    }
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        const LaneRow& r = rows_[i];
        if (r.section == section && r.kind != LaneRowKind::header &&
            r.kind != LaneRowKind::caption && rank >= r.first && rank < r.end) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::vector<int> TimelineLanes::passingRanks(int section, int first, int end) const {
    std::vector<int> out;
    for (int r = first; r < end; ++r) {
        if (passes(section, r)) {
            out.push_back(r);
        }
    }
    return out;
}

std::vector<float> TimelineLanes::summaryFractions(const LaneRow& row, double t0, double t1,
                                                   int columns) const {
    const Section& s = sections_.at(static_cast<std::size_t>(row.section));
    if (row.group < 0 || s.layout == nullptr) {
        return std::vector<float>(static_cast<std::size_t>(std::max(columns, 0)), 0.0F);
    }
    auto& profile = s.profiles.at(static_cast<std::size_t>(row.group));
    if (!profile) {
        profile.emplace(*s.layout, passingRanks(row.section, row.first, row.end));
    }
    return profile->fractions(t0, t1, columns);
}

}  // namespace pipewright::gui
