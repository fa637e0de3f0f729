#pragma once

#include <QColor>
#include <QString>
#include <QStringList>
#include <vector>

class QCustomPlot;
class QCPAxis;
class QCPBars;

namespace pipewright::gui {

// Colours a plot from its widget palette so light and dark themes both read.
void style_plot(QCustomPlot* plot);
// Category labels on `axis` at 1, 2, ... (bars are placed at the same keys).
void set_category_ticks(QCPAxis* axis, const QStringList& labels);
// Horizontal bars along the left axis, one per category.
QCPBars* add_horizontal_bars(QCustomPlot* plot, const std::vector<double>& values,
                             const QColor& color);

}  // namespace pipewright::gui
