#pragma once

#include <QObject>

#include "studio_core/format/export_path.h"
#include "window/controller_context.h"

class QMenu;
class QTabWidget;

namespace pipewright::gui {

class ComparisonPanel;
class FileController;
class MetricsPanel;
class TimelinePlot;

// File ▸ Export: pictures of the views, the timeline as a Chrome trace, the
// schedule as CSV (ours or PyTorch's), and the launch files a cluster user
// submits.
class ExportController : public QObject {
    Q_OBJECT

  public:
    enum class View { timeline, metrics, comparison, schedule };
    // The views whose pictures are exported; the tabs show a chart page
    // first, so that a tab never opened has its charts laid out.
    struct Views {
        TimelinePlot* timeline = nullptr;
        MetricsPanel* metrics = nullptr;
        ComparisonPanel* comparison = nullptr;
        QTabWidget* tabs = nullptr;
    };

    // `files` saves the project before its launch files are written.
    ExportController(const ControllerContext& context, const Views& views, FileController* files,
                     QObject* parent = nullptr);

    // Fills File ▸ Export.
    void buildMenu(QMenu* exports);

    // The timeline (PNG, SVG, PDF, Chrome trace), the Metrics or Comparison
    // charts (PNG, SVG, PDF) or the schedule (CSV), to `path` as given;
    // false with the reason.
    bool exportTo(View view, ExportFormat format, const QString& path, QString* error);

    // What a cluster user submits to run the saved project (`pipewright
    // launch-files`), written into `folder`; false with the reason. The
    // project must be saved, since every file runs it by its path.
    bool exportLaunchFiles(const QString& folder, QString* error);
    // Asks to save first where needed, then where, then exportLaunchFiles
    // (also the Run tab's button).
    void exportLaunchFilesWithDialog();

  private:
    // Asks where (the name's extension checked against `format`), then exportTo.
    void exportWithDialog(View view, ExportFormat format);
    // The file name first offered: beside a saved project, else in the
    // user's documents; named after the model.
    [[nodiscard]] QString suggestedPath(View view, ExportFormat format) const;
    // Why `view` cannot be exported now; empty when it can.
    [[nodiscard]] QString nothingToExport(View view) const;

    ControllerContext context_;
    Views views_;
    FileController* files_;
};

}  // namespace pipewright::gui
