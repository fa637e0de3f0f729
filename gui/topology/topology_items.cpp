#include "topology/topology_items.h"

#include <QApplication>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QPainter>
#include <QPalette>
#include <QStyleOptionGraphicsItem>
#include <algorithm>
#include <cmath>

#include "studio_core/canvas/canvas_detail.h"
#include "studio_core/format/format.h"
#include "style/colors.h"

namespace pipewright::gui {

namespace {

// A collapsed node's bars: one column per device, load over memory.
constexpr double kPad = 6;
constexpr double kCellWidth = 12;
constexpr double kCellGap = 2;
constexpr double kRowGap = 5;
constexpr double kSummaryMinWidth = 150;

double zoom_of(const QPainter* painter) {
    return QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
}

double pixels_of(const QFont& font) {
    return static_cast<double>(QFontInfo(font).pixelSize());
}

// A bar filling `rect` to `fraction` from the bottom (vertical) or the left.
void draw_bar(QPainter* painter, const QRectF& rect, double fraction, const QColor& color,
              const QColor& track, bool vertical) {
    painter->fillRect(rect, track);
    const double f = std::clamp(fraction, 0.0, 1.0);
    QRectF filled = rect;
    if (vertical) {
        filled.setTop(rect.bottom() - rect.height() * f);
    } else {
        filled.setWidth(rect.width() * f);
    }
    painter->fillRect(filled, color);
}

// A device that runs no stage, or before the first simulation: hatched.
void draw_idle(QPainter* painter, const QRectF& rect, const QColor& mid) {
    QColor hatch = mid;
    hatch.setAlpha(120);
    painter->fillRect(rect, QBrush(hatch, Qt::BDiagPattern));
}

QColor track_color(const QColor& mid) {
    QColor track = mid;
    track.setAlpha(70);
    return track;
}

QString device_tooltip(const DeviceLoad& d) {
    if (!d.simulated) {
        return QObject::tr("%1 (%2) · runs no stage")
            .arg(QString::fromStdString(d.path), QString::fromStdString(d.spec));
    }
    return QObject::tr("%1 (%2)\nload %3 · memory %4 of %5%6")
        .arg(QString::fromStdString(d.path), QString::fromStdString(d.spec), format_percent(d.load),
             format_bytes(static_cast<double>(d.peak_bytes)),
             format_bytes(static_cast<double>(d.capacity_bytes)),
             d.over ? QObject::tr(" · over its memory") : QString());
}

}  // namespace

QColor load_bar_color() {
    return {0x00, 0x72, 0xB2};  // Okabe-Ito blue
}

QColor memory_bar_color(bool over) {
    return over ? warning_color() : QColor(0x00, 0x9E, 0x73);  // Okabe-Ito bluish green
}

CanvasStyle CanvasStyle::fromApplication() {
    const QPalette pal = QApplication::palette();
    CanvasStyle s;
    s.text = pal.color(QPalette::Text);
    s.mid = pal.color(QPalette::Mid);
    s.dark_line = pal.color(QPalette::Dark);
    s.highlight = pal.color(QPalette::Highlight);
    s.dark = pal.color(QPalette::Base).lightness() < 128;
    s.font = QApplication::font();
    s.bold = s.font;
    s.bold.setBold(true);
    s.small = s.font;
    s.small.setPointSizeF(std::max(6.0, s.font.pointSizeF() * 0.85));
    s.bold_pixels = pixels_of(s.bold);
    s.small_pixels = pixels_of(s.small);
    return s;
}

CanvasLabel::CanvasLabel(const QString& text, const QFont& font, const QColor& color,
                         QGraphicsItem* parent)
    : QGraphicsSimpleTextItem(text, parent), pixels_(pixels_of(font)) {
    setFont(font);
    setBrush(color);
    // Clicks go to the box the label names.
    setAcceptedMouseButtons(Qt::NoButton);
}

void CanvasLabel::paint(QPainter* painter, const QStyleOptionGraphicsItem* option,
                        QWidget* widget) {
    if (text_readable(pixels_, zoom_of(painter))) {
        QGraphicsSimpleTextItem::paint(painter, option, widget);
    }
}

ChipItem::ChipItem(const QRectF& rect, double text_pixels, QGraphicsItem* parent)
    : QGraphicsRectItem(rect, parent), text_pixels_(text_pixels) {}

void ChipItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
    if (text_readable(text_pixels_, zoom_of(painter))) {
        QGraphicsRectItem::paint(painter, option, widget);
    }
}

DeviceBox::DeviceBox(DeviceLoad load, double text_pixels, QGraphicsItem* parent)
    : QGraphicsRectItem(parent), load_(std::move(load)), text_pixels_(text_pixels) {}

void DeviceBox::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) {
    if (text_readable(text_pixels_, zoom_of(painter))) {
        QGraphicsRectItem::paint(painter, option, widget);
        return;
    }
    // Too small to read: the box becomes two bars, load above memory.
    painter->setPen(Qt::NoPen);
    painter->setBrush(brush());
    const QRectF r = rect();
    painter->drawRect(r);
    const QColor mid = QApplication::palette().color(QPalette::Mid);
    const double margin = std::min(r.width(), r.height()) * 0.1;
    const QRectF inner = r.adjusted(margin, margin, -margin, -margin);
    const double half = (inner.height() - margin) / 2;
    const QRectF top(inner.left(), inner.top(), inner.width(), half);
    const QRectF bottom(inner.left(), inner.bottom() - half, inner.width(), half);
    if (load_.simulated) {
        draw_bar(painter, top, load_.load, load_bar_color(), track_color(mid), false);
        draw_bar(painter, bottom, load_.memoryFraction(), memory_bar_color(load_.over),
                 track_color(mid), false);
    } else {
        draw_idle(painter, inner, mid);
    }
    painter->setBrush(Qt::NoBrush);
    painter->setPen(pen());
    painter->drawRect(r);
}

DeviceCell::DeviceCell(DeviceLoad load, double bar_height, QGraphicsItem* parent)
    : QGraphicsRectItem(0, 0, kCellWidth, 2 * bar_height + kCellGap, parent),
      load_(std::move(load)),
      bar_height_(bar_height) {
    setToolTip(device_tooltip(load_));
}

void DeviceCell::paint(QPainter* painter, const QStyleOptionGraphicsItem* /*option*/,
                       QWidget* /*widget*/) {
    const QRectF r = rect();
    const QColor mid = QApplication::palette().color(QPalette::Mid);
    const QRectF top(r.left(), r.top(), r.width(), bar_height_);
    const QRectF bottom(r.left(), r.bottom() - bar_height_, r.width(), bar_height_);
    if (load_.simulated) {
        draw_bar(painter, top, load_.load, load_bar_color(), track_color(mid), true);
        draw_bar(painter, bottom, load_.memoryFraction(), memory_bar_color(load_.over),
                 track_color(mid), true);
    } else {
        draw_idle(painter, top, mid);
        draw_idle(painter, bottom, mid);
    }
    // The outline is the drop-target and search highlight.
    if (pen().style() != Qt::NoPen) {
        painter->setBrush(Qt::NoBrush);
        painter->setPen(pen());
        painter->drawRect(r);
    }
}

NodeSummaryBox::NodeSummaryBox(NodeLoad load, const CanvasStyle& style)
    : load_(std::move(load)),
      title_pixels_(style.bold_pixels),
      title_font_(style.font),
      text_(style.text) {
    // The summary is read at fit-to-view, where the canvas is small: its
    // lines use the normal font, not the small one of the device boxes.
    const QFontMetricsF bold(style.bold);
    const QFontMetricsF text(style.font);
    const QString title = QStringLiteral("▸ %1").arg(QString::fromStdString(load_.name));
    const int count = static_cast<int>(load_.devices.size());
    QString figures;
    if (load_.simulated == 0) {
        figures = QObject::tr("no stage simulated");
    } else {
        figures =
            QObject::tr("load %1 · mem %2")
                .arg(format_percent(load_.mean_load), format_percent(load_.max_memory_fraction));
    }
    const QString over = load_.over == 0 ? QString()
                         : load_.over == 1
                             ? QObject::tr("1 device over its memory")
                             : QObject::tr("%1 devices over their memory").arg(load_.over);

    // Wide nodes wrap their columns into a square-ish block.
    const int per_row =
        count <= 16
            ? std::max(count, 1)
            : std::max(16, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count)))));
    const int rows = count == 0 ? 0 : (count + per_row - 1) / per_row;
    const double row_labels = std::max(text.horizontalAdvance(QObject::tr("load")),
                                       text.horizontalAdvance(QObject::tr("mem"))) +
                              4;
    const double cells_width = per_row * (kCellWidth + kCellGap) - kCellGap;
    // Each bar as tall as a line of text, so that its label beside it fits.
    const double bar = std::ceil(text.height());
    const double width = std::max({kSummaryMinWidth, 2 * kPad + row_labels + cells_width,
                                   2 * kPad + bold.horizontalAdvance(title) + 1,
                                   2 * kPad + text.horizontalAdvance(figures) + 1});

    // Header: title, the devices' specs, the figures (and what is over).
    double y = 3;
    auto* t = new CanvasLabel(title, style.bold, style.text, this);
    t->setPos(kPad, y);
    y += std::ceil(bold.height());
    const double text_width = width - 2 * kPad;
    const QString specs =
        load_.specs.empty() ? QObject::tr("no devices") : QString::fromStdString(load_.specs);
    for (const auto& [line, color] : {std::pair{specs, style.text}, std::pair{figures, style.text},
                                      std::pair{over, warning_color()}}) {
        if (line.isEmpty()) {
            continue;
        }
        auto* l = new CanvasLabel(text.elidedText(line, Qt::ElideRight, text_width), style.font,
                                  color, this);
        l->setPos(kPad, y);
        y += std::ceil(text.height());
    }
    y += 4;
    cells_top_ = y;

    for (int row = 0; row < rows; ++row) {
        const double top = y + row * (2 * bar + kCellGap + kRowGap);
        if (row == 0) {
            auto* l = new CanvasLabel(QObject::tr("load"), style.font, style.text, this);
            l->setPos(kPad, top + (bar - text.height()) / 2);
            auto* m = new CanvasLabel(QObject::tr("mem"), style.font, style.text, this);
            m->setPos(kPad, top + bar + kCellGap + (bar - text.height()) / 2);
        }
        for (int col = 0; col < per_row; ++col) {
            const int i = row * per_row + col;
            if (i >= count) {
                break;
            }
            auto* cell = new DeviceCell(load_.devices[static_cast<std::size_t>(i)], bar, this);
            cell->setPos(kPad + row_labels + col * (kCellWidth + kCellGap), top);
            cell->setPen(Qt::NoPen);
        }
    }
    const double height =
        y + rows * (2 * bar + kCellGap + kRowGap) - (rows > 0 ? kRowGap : 0) + kPad;
    setRect(0, 0, width, height);
    QString tip =
        QObject::tr("Node %1 · %2 · %3").arg(QString::fromStdString(load_.name), specs, figures);
    tip += QObject::tr(
        "\nBars per device: load (busy share of the iteration) above memory "
        "(peak over capacity, red when over)");
    if (!over.isEmpty()) {
        tip += QStringLiteral(" · ") + over;
    }
    setToolTip(tip + QObject::tr("\nDouble-click to expand · right-click for more"));

    // In the regular weight, narrower than bold: "node127" then still fits
    // at a quarter of the size.
    QFont probe = title_font_;
    probe.setPixelSize(100);
    const double width_at_100 =
        QFontMetricsF(probe).horizontalAdvance(QString::fromStdString(load_.name));
    const QRectF room = nameRoom();
    name_pixels_ = std::min(room.height() * 0.9,
                            width_at_100 > 0 ? 100 * room.width() / width_at_100 : room.height());
}

QRectF NodeSummaryBox::nameRoom() const {
    return {kPad / 2, 2, rect().width() - kPad, std::max(1.0, cells_top_ - 4)};
}

void NodeSummaryBox::paint(QPainter* painter, const QStyleOptionGraphicsItem* option,
                           QWidget* widget) {
    QGraphicsRectItem::paint(painter, option, widget);
    const double zoom = zoom_of(painter);
    if (text_readable(title_pixels_, zoom)) {
        return;  // the labels say it
    }
    // The header's labels are too small: write the name across the header's
    // room, in the size all the summaries share if that can be read, else
    // as large as this one's room allows if that can.
    double pixels = common_name_pixels_ > 0 ? common_name_pixels_ : name_pixels_;
    if (pixels * zoom < kMinReadableTextPixels) {
        pixels = name_pixels_;
    }
    if (pixels * zoom < kMinReadableTextPixels || pixels < 1) {
        return;
    }
    const QRectF room = nameRoom();
    const QString name = QString::fromStdString(load_.name);
    QFont font = title_font_;
    font.setPixelSize(std::max(1, static_cast<int>(pixels)));
    painter->setFont(font);
    painter->setPen(text_);
    painter->drawText(room, Qt::AlignHCenter | Qt::AlignVCenter, name);
}

}  // namespace pipewright::gui
