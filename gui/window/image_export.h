#pragma once

#include <QByteArray>
#include <QString>

#include "studio_core/format/export_path.h"

class QCustomPlot;
class QWidget;

namespace pipewright::gui {

// Pictures of what the studio shows, as File ▸ Export writes them: PNG at
// twice the screen's pixels, SVG and PDF as vectors (QCustomPlot draws its
// plots straight into the SVG or PDF painter, text stays text).

// `plot` alone, at its size on screen. `format` is png, svg or pdf.
[[nodiscard]] QByteArray render_plot(QCustomPlot* plot, ExportFormat format);
// `area` and every widget shown inside it, at their places: the charts of a
// panel with their figures and notes.
[[nodiscard]] QByteArray render_widgets(QWidget* area, ExportFormat format);

// Writes `data` to `path` in one piece (write_file_atomically); false with
// the reason in *error.
bool write_export(const QString& path, const QByteArray& data, QString* error);

}  // namespace pipewright::gui
