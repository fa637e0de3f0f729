// The timeline's tooltips: what the block, lane or group under the cursor
// is, in words (TimelinePlot's other half, timeline_plot.cpp, lays out and
// draws).
#include <QObject>
#include <algorithm>

#include "studio_core/format/format.h"
#include "studio_core/timeline/action_words.h"
#include "timeline/timeline_blocks.h"
#include "timeline/timeline_plot.h"

namespace pipewright::gui {

QString TimelinePlot::tooltipAt(const QPoint& pos) const {
    const int index = rowAtPixel(pos);
    if (index < 0) {
        return {};
    }
    const LaneRow& row = lanes_.rows()[static_cast<std::size_t>(index)];
    const LaneTree& tree = lanes_.tree(row.section);
    const QString side = row.section == 1 ? tr("<br><i>measured</i>") : QString();
    const bool in_names = pos.x() < axisRect()->left();
    if (row.kind == LaneRowKind::caption) {
        return measuredLabel();
    }
    if (row.kind == LaneRowKind::header || row.kind == LaneRowKind::summary) {
        const LaneGroup& g = tree.group(row.group);
        QString text = tr("<b>%1</b>: %2 of %3 devices shown, ranks %4–%5")
                           .arg(QString::fromStdString(g.key))
                           .arg(row.devices)
                           .arg(g.size())
                           .arg(g.first_rank)
                           .arg(g.end_rank - 1);
        if (row.kind == LaneRowKind::summary && !in_names && pos.x() >= axisRect()->left()) {
            // The busy share under the cursor, over a few pixels.
            const double t = xAxis->pixelToCoord(pos.x()) * unit_;
            const double pixel = xAxis->range().size() * unit_ / std::max(1, axisRect()->width());
            const auto busy = lanes_.summaryFractions(row, t - 2 * pixel, t + 2 * pixel, 1);
            text += tr("<br>%1 % of them computing at %2")
                        .arg(std::lround(100 * busy.front()))
                        .arg(format_duration(t));
        }
        text += row.kind == LaneRowKind::summary ? tr("<br>Click its name to expand it")
                                                 : tr("<br>Click its name to collapse it");
        return text + side;
    }
    if (in_names) {
        QString group;
        if (row.section == 0 && static_cast<std::size_t>(row.rank) < tensor_groups_.size() &&
            tensor_groups_[static_cast<std::size_t>(row.rank)].size() > 1) {
            const auto& members = tensor_groups_[static_cast<std::size_t>(row.rank)];
            group = members.size() == 2
                        ? tr("<br>and %1, the rest of its tensor-parallel group: it runs the same "
                             "actions on its slice")
                              .arg(QString::fromStdString(members[1]))
                        : tr("<br>and %1 to %2, the rest of its tensor-parallel group: they run "
                             "the same actions on their slices")
                              .arg(QString::fromStdString(members[1]),
                                   QString::fromStdString(members.back()));
        }
        return tr("<b>%1</b> · rank %2")
                   .arg(QString::fromStdString(tree.device(row.rank)))
                   .arg(row.rank) +
               group + side;
    }
    const TimelineLayout* layout = lanes_.layout(row.section);
    const QRectF rect = rowRect(index);
    const double within = (pos.y() - rect.top()) / std::max(1.0, rect.height());
    const bool comm = rect.height() >= kTwoRowLane && within >= (kComputeBottom + kCommTop) / 2;
    const double t = xAxis->pixelToCoord(pos.x()) * unit_;
    const double tolerance = 2 * xAxis->range().size() * unit_ / std::max(1, axisRect()->width());
    const int layout_row = 2 * row.rank + (comm ? 1 : 0);
    // The sub-row under the pointer, where overlapping transfers are drawn
    // apart; next to none there, the nearest block of any.
    int event = -1;
    if (const int tracks = layout->tracks(layout_row); comm && tracks > 1) {
        const double share = (within - kCommTop) / (kCommBottom - kCommTop);
        const int track = std::clamp(static_cast<int>(share * tracks), 0, tracks - 1);
        event = layout->eventAt(layout_row, t, tolerance, track);
    }
    if (event < 0) {
        event = layout->eventAt(layout_row, t, tolerance);
    }
    if (event < 0) {
        return {};
    }
    return tooltipFor(row.section == 1 ? measured_ : *timeline_, event) + side;
}

QString TimelinePlot::kernelsLine(const Action& action) const {
    if (action.stage < 0 || static_cast<std::size_t>(action.stage) >= stage_kernels_.size()) {
        return {};
    }
    const auto& passes = stage_kernels_[static_cast<std::size_t>(action.stage)];
    const auto line = [](const QString& label, const QString& kernels) {
        return kernels.isEmpty() ? QString()
                                 : QStringLiteral("<br>") + label + kernels.toHtmlEscaped();
    };
    switch (action.type) {
        case ActionType::forward:
            return line(tr("kernels: "), passes[0]);
        case ActionType::backward_input:
            return line(tr("kernels: "), passes[1]);
        case ActionType::backward_weight:
            return line(tr("kernels: "), passes[2]);
        case ActionType::backward:
            return line(tr("input gradient: "), passes[1]) +
                   line(tr("weight gradient: "), passes[2]);
        default:
            return {};
    }
}

QString TimelinePlot::tooltipFor(const Timeline& timeline, int index) const {
    const auto i = static_cast<std::size_t>(index);
    const TimelineEvent& e = timeline.events[i];
    const auto device = [&timeline](int rank) {
        return rank >= 0 && static_cast<std::size_t>(rank) < timeline.devices.size()
                   ? QString::fromStdString(timeline.devices[static_cast<std::size_t>(rank)])
                   : tr("rank %1").arg(rank);
    };
    QString text = tr("<b>%1</b> (%2)<br>on %3<br>%4, from %5 to %6")
                       .arg(action_in_words(e.action).toHtmlEscaped(),
                            QString::fromStdString(to_string(e.action)), device(e.rank),
                            format_duration(e.duration_s()), format_duration(e.start_s),
                            format_duration(e.end_s));
    if (!is_compute(e.action.type)) {
        const QString moved = format_bytes(e.bytes);
        const QString peer = device(e.peer_rank).toHtmlEscaped();
        text += is_send(e.action.type)
                    ? tr("<br>%1 to %2, on the link for this time").arg(moved, peer)
                : e.duration_s() > 0
                    ? tr("<br>%1 from %2: the device waited this long for it").arg(moved, peer)
                    : tr("<br>%1 from %2, there before it was needed").arg(moved, peer);
    } else if (i > 0) {
        // A timeline lists each rank's actions in the order it ran them: the
        // receive just before a compute block is the data it waited for.
        const TimelineEvent& before = timeline.events[i - 1];
        if (before.rank == e.rank && is_recv(before.action.type) && before.duration_s() > 0) {
            text += tr("<br>waited %1 for stage %2 before it could start")
                        .arg(format_duration(before.duration_s()))
                        .arg(peer_stage(before.action));
        }
    }
    for (const SubBlock kind : kSubBlockKinds) {
        if (const double s =
                &timeline == timeline_.get() ? blocks_->subBlockSeconds(kind, e.action) : 0;
            s > 0) {
            text += QStringLiteral("<br>") + sub_block_line(kind, format_duration(s));
        }
    }
    if (&timeline == timeline_.get()) {
        text += kernelsLine(e.action);
    }
    // Qt wraps rich-text tooltips at a narrow width; each line is short.
    return QStringLiteral("<p style='white-space:pre'>") + text + QStringLiteral("</p>");
}

}  // namespace pipewright::gui
