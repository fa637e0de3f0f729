#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <optional>

#include "studio_core/child_process_group.h"
#include "studio_core/run_progress.h"

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
// Cancel reaches the launcher's workers too.
class RunProcess : public QObject {
    Q_OBJECT

  public:
    // A run still going when this is deleted is cancelled and waited for.
    explicit RunProcess(QObject* parent = nullptr);

    [[nodiscard]] static QStringList arguments(const RunRequest& request);

    // False (with `failed` not emitted) when a run is already going.
    bool start(const RunRequest& request);
    // SIGTERM to the launcher, which stops its ranks and exits (code 130);
    // if it has not ended after the grace period, SIGKILL to the whole group.
    void cancel();

    [[nodiscard]] bool isRunning() const { return child_->isRunning(); }
    [[nodiscard]] bool isCancelling() const { return child_->isCancelling(); }
    [[nodiscard]] qint64 processId() const { return child_->processId(); }
    [[nodiscard]] const RunRequest& request() const { return request_; }
    [[nodiscard]] const RunProgressParser& parser() const { return parser_; }
    [[nodiscard]] const std::optional<RunSummary>& summary() const { return summary_; }
    void setCancelGraceMs(int ms) { child_->setCancelGraceMs(ms); }

  signals:
    void started();
    // A step finished (1-based, of `steps`).
    void progress(int step, int steps);
    // Every line the run writes on stderr but its step events, for the log.
    void output(const QString& line);
    // A step event, for the log.
    void stepLine(const pipewright::gui::RunStep& step);
    // Exit code 0; summary() holds what it printed.
    void succeeded();
    // Non-zero exit, a crash or no start: the run's own words when it gave any.
    void failed(const QString& message);
    // Ended after cancel().
    void cancelled();

  private:
    void readStderr();
    void onFinished(int exitCode, QProcess::ExitStatus status, bool wasCancelled);
    void publish(const std::vector<RunOutputLine>& lines);

    ChildProcessGroup* child_;
    RunRequest request_;
    RunProgressParser parser_;
    QByteArray stdout_;
    std::optional<RunSummary> summary_;
};

}  // namespace pipewright::gui
