#pragma once

#include <QColor>
#include <QFont>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>

#include "studio_core/canvas/node_load.h"

namespace pipewright::gui {

// The boxes and labels of the cluster canvas. Each decides from the zoom it
// is painted at (the painter's transform) how much to draw, so that a
// zoomed-out canvas shows bars where its text would be too small to read,
// without rebuilding the scene at every zoom step.

// The colours and fonts of one rebuild (they follow the palette and theme).
struct CanvasStyle {
    QColor text;
    QColor mid;
    QColor dark_line;
    QColor highlight;
    bool dark = false;
    QFont font;
    QFont bold;
    QFont small;
    double bold_pixels = 12;   // the bold font's height at zoom 1
    double small_pixels = 10;  // the small font's (chip labels, spec lines)
    [[nodiscard]] static CanvasStyle fromApplication();
};

// Text that draws nothing where it would be smaller than readable.
class CanvasLabel : public QGraphicsSimpleTextItem {
  public:
    CanvasLabel(const QString& text, const QFont& font, const QColor& color, QGraphicsItem* parent);
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  private:
    double pixels_;
};

// A layer on its device: drawn only while its name is readable; below that
// the device shows bars instead.
class ChipItem : public QGraphicsRectItem {
  public:
    ChipItem(const QRectF& rect, double text_pixels, QGraphicsItem* parent);
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  private:
    double text_pixels_;
};

// A device of an expanded node: its name, spec, memory and chips while
// readable; a load bar over a memory bar, filling the box, below that.
class DeviceBox : public QGraphicsRectItem {
  public:
    DeviceBox(DeviceLoad load, double text_pixels, QGraphicsItem* parent);
    [[nodiscard]] const DeviceLoad& load() const { return load_; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  private:
    DeviceLoad load_;
    double text_pixels_;
};

// A device inside a collapsed node: one column, its load above its memory,
// each filled from the bottom.
class DeviceCell : public QGraphicsRectItem {
  public:
    // Each bar is `bar_height` tall.
    DeviceCell(DeviceLoad load, double bar_height, QGraphicsItem* parent);
    [[nodiscard]] const DeviceLoad& load() const { return load_; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  private:
    DeviceLoad load_;
    double bar_height_;
};

// A collapsed node. Its header lines are labels; where they are too small
// to read, the box writes the node's name across itself as large as fits,
// or nothing when even that would be too small.
class NodeSummaryBox : public QGraphicsRectItem {
  public:
    NodeSummaryBox(NodeLoad load, const CanvasStyle& style);
    [[nodiscard]] const NodeLoad& load() const { return load_; }
    // The largest pixel size (at zoom 1) at which the name fits the header.
    [[nodiscard]] double namePixels() const { return name_pixels_; }
    // The size every summary writes its name in when they all can: names
    // of one size read as one grid, not as "node99" louder than "node100".
    void setCommonNamePixels(double pixels) { common_name_pixels_ = pixels; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  private:
    [[nodiscard]] QRectF nameRoom() const;

    NodeLoad load_;
    double cells_top_ = 0;  // where the bars start, below the header
    double name_pixels_ = 0;
    double common_name_pixels_ = 0;
    double title_pixels_;
    QFont title_font_;
    QColor text_;
};

// Colours of the bars, shared by the boxes and the canvas's legend.
[[nodiscard]] QColor load_bar_color();
[[nodiscard]] QColor memory_bar_color(bool over);

}  // namespace pipewright::gui
