#pragma once

#include <QColor>
#include <QString>
#include <optional>
#include <vector>

#include "qcustomplot.h"

namespace pipewright::gui {

// One bar of a BarChart: a category on the left axis, its value in the
// chart's unit, and the text beside it.
struct ChartBar {
    QString category;
    double value = 0;
    QString label;                // beside the bar, never elided or clipped
    QString tooltip;              // the whole row in words
    bool flagged = false;         // does not fit: drawn hatched in the warning colour
    std::optional<double> limit;  // a capacity, drawn as a dashed mark across the bar
};

// A horizontal bar chart whose value axis always leaves room for the labels
// beside the bars: the range is worked out from the labels' widths in the
// chart's font each time the chart is resized (bar_axis_range), and the
// chart asks for at least the width its labels need. Hovering a row shows
// its tooltip.
class BarChart : public QCustomPlot {
    Q_OBJECT

  public:
    BarChart(const QString& title, QWidget* parent = nullptr);

    void setBars(std::vector<ChartBar> bars, const QColor& color, const QString& axisLabel);
    void setTitle(const QString& title);
    [[nodiscard]] QString title() const;
    // Colours from the widget's palette (after a theme change).
    void restyle();

    [[nodiscard]] const std::vector<ChartBar>& bars() const { return bars_; }
    // The length bar i is drawn with: its value, or the scale's cap
    // (bar_scale_cap) for an outlier, drawn broken with its figure beside it.
    [[nodiscard]] double drawnValue(int i) const { return drawn_.at(static_cast<std::size_t>(i)); }
    [[nodiscard]] bool isBroken(int i) const {
        return drawn_.at(static_cast<std::size_t>(i)) !=
               bars_.at(static_cast<std::size_t>(i)).value;
    }
    // Where bar i's label is drawn, in widget pixels (as of the last layout).
    [[nodiscard]] QRect labelRect(int i) const;
    // The tooltip of the row under `pos` (widget pixels); empty off the rows.
    [[nodiscard]] QString toolTipAt(const QPoint& pos) const;
    [[nodiscard]] QSize minimumSizeHint() const override;

  protected:
    // After QCustomPlot lays out the axes (every replot and export), before
    // it draws: the value axis is fitted to the axis rectangle's new width.
    void updateLayout() override;
    bool event(QEvent* event) override;

  private:
    [[nodiscard]] double labelWidth(const QString& text) const;
    // Sets the value axis so that every label fits an axis `axis_px` long.
    void fitValueAxis(double axis_px);

    QCPTextElement* title_ = nullptr;
    std::vector<ChartBar> bars_;
    std::vector<double> drawn_;  // per bar: its value, or the cap
    std::optional<double> cap_;  // where the scale stops (bar_scale_cap)
    std::vector<QCPItemText*> labels_;
    int min_width_ = 0;
};

}  // namespace pipewright::gui
