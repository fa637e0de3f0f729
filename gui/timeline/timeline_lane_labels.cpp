#include "timeline/timeline_lane_labels.h"

#include "studio_core/timeline/label_fit.h"
#include "timeline/timeline_blocks.h"

namespace pipewright::gui {

namespace {

constexpr int kIndent = 12;  // pixels per level of nesting
constexpr int kMinWidth = 90;
constexpr int kMaxWidth = 260;

}  // namespace

TimelineLaneLabels::TimelineLaneLabels(QCustomPlot* plot, const TimelineLanes* lanes)
    : QCPLayerable(plot, QStringLiteral("axes")), lanes_(lanes) {}

void TimelineLaneLabels::applyDefaultAntialiasingHint(QCPPainter* painter) const {
    painter->setRenderHint(QPainter::Antialiasing, false);
}

QString TimelineLaneLabels::textOf(const LaneRow& row) const {
    const LaneTree& tree = lanes_->tree(row.section);
    switch (row.kind) {
        case LaneRowKind::caption:
            return {};
        case LaneRowKind::header:
        case LaneRowKind::summary: {
            const LaneGroup& g = tree.group(row.group);
            const QString marker =
                row.kind == LaneRowKind::header ? QStringLiteral("▾ ") : QStringLiteral("▸ ");
            const QString count = row.devices == g.size()
                                      ? QString::number(g.size())
                                      : QStringLiteral("%1/%2").arg(row.devices).arg(g.size());
            return marker + QString::fromStdString(g.name) + QStringLiteral(" · ") + count;
        }
        case LaneRowKind::lane: {
            const QString name = QString::fromStdString(tree.laneName(row.rank));
            return row.section == 1 ? QObject::tr("%1 · measured").arg(name) : name;
        }
    }
    return {};
}

int TimelineLaneLabels::preferredWidth(const QFont& font) const {
    // Every name the column may show, whatever is collapsed now, so that the
    // plot does not shift sideways when a group opens.
    const QFontMetrics metrics(font);
    QFont bold = font;
    bold.setBold(true);
    const QFontMetrics bold_metrics(bold);
    int widest = 0;
    for (int s = 0; s < TimelineLanes::kSections; ++s) {
        const LaneTree& tree = lanes_->tree(s);
        for (const LaneGroup& g : tree.groups()) {
            const QString text =
                QStringLiteral("▾ %1 · %2/%2").arg(QString::fromStdString(g.name)).arg(g.size());
            widest = std::max(widest, g.depth * kIndent + bold_metrics.horizontalAdvance(text));
        }
        for (int r = 0; r < tree.ranks(); ++r) {
            const int g = tree.groupOf(r);
            const int depth = g < 0 ? 0 : tree.group(g).depth + 1;
            LaneRow row;
            row.section = s;
            row.rank = r;
            widest = std::max(widest, depth * kIndent + metrics.horizontalAdvance(textOf(row)));
        }
    }
    return std::clamp(widest + 14, kMinWidth, kMaxWidth);
}

void TimelineLaneLabels::draw(QCPPainter* painter) {
    drawn_.clear();
    drawn_texts_.clear();
    QCPAxisRect* rect = mParentPlot->axisRect();
    QCPAxis* value = mParentPlot->yAxis;
    const QFont font = mParentPlot->font();
    const QFontMetricsF metrics(font);
    QFont small = font;
    small.setPointSizeF(font.pointSizeF() * 0.85);
    const QFontMetricsF small_metrics(small);
    const QColor text = mParentPlot->palette().color(QPalette::Text);
    QColor faint = text;
    faint.setAlpha(150);
    const double right = rect->left() - 6;
    const double view_top = rect->top();
    const double view_bottom = rect->bottom();
    painter->save();
    // Names are clipped to the plot's height: a row half scrolled out is cut,
    // never drawn over the axis below.
    painter->setClipRect(QRectF(0, view_top, rect->left(), view_bottom - view_top));
    const auto [first, last] = lanes_->rowsBetween(value->range().lower, value->range().upper);
    for (int i = first; i < last; ++i) {
        const LaneRow& row = lanes_->rows()[static_cast<std::size_t>(i)];
        const double y0 = value->coordToPixel(row.top);
        const double y1 = value->coordToPixel(row.bottom());
        const bool group = row.kind == LaneRowKind::header || row.kind == LaneRowKind::summary;
        if (row.kind == LaneRowKind::caption || !lane_label_fits(y1 - y0, metrics.height())) {
            continue;
        }
        const double left = 4 + row.depth * kIndent;
        // A lane tall enough for two rows names its communication row too.
        const bool two_rows = row.kind == LaneRowKind::lane && y1 - y0 >= kTwoRowLane;
        const double centre =
            two_rows ? y0 + (y1 - y0) * (kComputeTop + kComputeBottom) / 2 : (y0 + y1) / 2;
        QFont shown = font;
        shown.setBold(group);
        const QFontMetricsF shown_metrics(shown);
        const QString label = shown_metrics.elidedText(textOf(row), Qt::ElideMiddle, right - left);
        painter->setFont(shown);
        painter->setPen(text);
        const double width = shown_metrics.horizontalAdvance(label);
        QRectF box(left, centre - metrics.height() / 2, std::min(width, right - left),
                   metrics.height());
        // The text stays inside its own row.
        box.moveTop(std::clamp(box.top(), y0, y1 - box.height()));
        painter->drawText(box, Qt::AlignLeft | Qt::AlignVCenter, label);
        drawn_.push_back(box);
        drawn_texts_ << label;
        const double comm_centre = y0 + (y1 - y0) * (kCommTop + kCommBottom) / 2;
        if (two_rows && comm_centre - small_metrics.height() / 2 >= box.bottom() &&
            comm_centre + small_metrics.height() / 2 <= y1) {
            painter->setFont(small);
            painter->setPen(faint);
            const QString comm = QObject::tr("comm");
            const QRectF comm_box(right - small_metrics.horizontalAdvance(comm),
                                  comm_centre - small_metrics.height() / 2,
                                  small_metrics.horizontalAdvance(comm), small_metrics.height());
            painter->drawText(comm_box, Qt::AlignRight | Qt::AlignVCenter, comm);
            drawn_.push_back(comm_box);
            drawn_texts_ << comm;
        }
    }
    painter->restore();
}

}  // namespace pipewright::gui
