#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <optional>

#include "studio_core/processes/cli_process.h"
#include "studio_core/processes/run_progress.h"

namespace pipewright::gui {

// What to run: `pipewright run PROJECT --progress json --out DIR --json`.
struct RunRequest {
    QString cli;           // the pipewright executable
    QString project_file;  // the project as edited, written for the run
    QString out_dir;       // the run folder
    std::optional<int> steps;
    std::optional<int> port;  // rendezvous port; a free one when unset
    QString device;           // --device: auto, cpu or cuda; the CLI's default when empty
};

// A real run as a child process. The studio never links LibTorch: the
// command line does the training, and a crash there never takes the window
// down. The run gets its own process group, so that the last resort of
// Cancel reaches the launcher's workers too (CliProcess).
class RunProcess : public CliProcess {
    Q_OBJECT

  public:
    explicit RunProcess(QObject* parent = nullptr);

    [[nodiscard]] static QStringList arguments(const RunRequest& request);

    // False (with `failed` not emitted) when a run is already going.
    bool start(const RunRequest& request);

    [[nodiscard]] const RunRequest& request() const { return request_; }
    [[nodiscard]] const RunProgressParser& parser() const { return lines(); }
    [[nodiscard]] const std::optional<RunSummary>& summary() const { return summary_; }

  signals:
    // A step finished (1-based, of `steps`).
    void progress(int step, int steps);
    // Every line the run writes on stderr but its step events, for the log.
    void output(const QString& line);
    // A step event, for the log.
    void stepLine(const pipewright::gui::RunStep& step);

  protected:
    void lineRead(const RunOutputLine& line) override;
    void exited(int exitCode, QProcess::ExitStatus status) override;

  private:
    RunRequest request_;
    QByteArray stdout_;
    std::optional<RunSummary> summary_;
};

}  // namespace pipewright::gui
