#pragma once

#include <cstdint>
#include <vector>

#include "studio_core/timeline/timeline_layout.h"

namespace pipewright::gui {

// How busy a set of devices is over time: the number computing at each
// moment as a step function, with its running integral, so that the busy
// time inside any interval is two look-ups. A collapsed group's summary lane
// and the overview strip shade each pixel column by this fraction.
class BusyProfile {
  public:
    BusyProfile() = default;
    // The compute rows of `ranks` in `layout`.
    BusyProfile(const TimelineLayout& layout, const std::vector<int>& ranks);

    [[nodiscard]] int devices() const { return devices_; }
    // Device-seconds of compute inside [a, b].
    [[nodiscard]] double busyBetween(double a, double b) const;
    // The fraction of the devices busy in each of `columns` equal columns of
    // [t0, t1], in one pass over the steps inside the window.
    [[nodiscard]] std::vector<float> fractions(double t0, double t1, int columns) const;

  private:
    [[nodiscard]] double integralAt(double t) const;

    int devices_ = 0;
    std::vector<double> times_;     // where the count changes, ascending
    std::vector<int> counts_;       // devices busy from times_[i] to times_[i + 1]
    std::vector<double> integral_;  // device-seconds busy before times_[i]
};

// BusyProfile(layout, ranks).fractions(t0, t1, columns) without building the
// profile: each block adds its share to the columns it touches, with no
// sort. For one look at a window, as the overview strip takes (on 1,024
// lanes of 4 M actions the profile's sort took most of a second).
[[nodiscard]] std::vector<float> busy_fractions(const TimelineLayout& layout,
                                                const std::vector<int>& ranks, double t0, double t1,
                                                int columns);

// One pixel column of a row whose blocks are narrower than a pixel: how much
// of it blocks cover (0–1), and the kind of the block covering most of it.
struct ColumnCover {
    float cover = 0;
    float largest = 0;  // the widest single block's share, which picks the kind
    BlockKind kind = BlockKind::forward;
};

// What one row draws at one zoom, Tracy-style: blocks at least `min_pixels`
// wide are drawn as boxes; every narrower block is added to the pixel columns
// it touches instead, so drawing costs follow the pixels, not the actions.
struct RowPaint {
    std::vector<const Block*> boxes;
    std::vector<ColumnCover> columns;  // empty when no block was narrow
};

// `columns` pixel columns cover [t0, t1]; the row's blocks are sorted by start.
void paint_row(const TimelineLayout& layout, int row, double t0, double t1, int columns,
               double min_pixels, RowPaint* out);

}  // namespace pipewright::gui
