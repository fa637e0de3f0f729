#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

#include "studio_core/processes/child_process_group.h"
#include "studio_core/processes/run_progress.h"

namespace pipewright::gui {

// A command of the command line (`pipewright run`, `pipewright profile`)
// as a child process in its own process group, its stderr read in lines:
// what RunProcess and ProfileProcess share. Each says what its lines mean
// (lineRead) and how it ended (exited).
class CliProcess : public QObject {
    Q_OBJECT

  public:
    // A command still going when this is deleted is cancelled and waited for.
    explicit CliProcess(QObject* parent = nullptr);

    // SIGTERM to the command; if it has not ended after the grace period,
    // SIGKILL to its whole group.
    void cancel() { child_->cancel(); }
    [[nodiscard]] bool isRunning() const { return child_->isRunning(); }
    [[nodiscard]] bool isCancelling() const { return child_->isCancelling(); }
    [[nodiscard]] qint64 processId() const { return child_->processId(); }
    void setCancelGraceMs(int ms) { child_->setCancelGraceMs(ms); }

  signals:
    void started();
    // Exit code 0.
    void succeeded();
    // Non-zero exit, a crash or no start: the command's own words when it gave any.
    void failed(const QString& message);
    // Ended after cancel().
    void cancelled();

  protected:
    // Starts `cli` with `arguments` in `folder` (empty: this one), with the
    // stderr lines read afresh.
    bool launch(const QString& cli, const QStringList& arguments, const QString& folder = {});
    // One line of stderr (a step event, a message), in order.
    virtual void lineRead(const RunOutputLine& line) = 0;
    // The command ended (every stderr line read first); not called after cancel().
    virtual void exited(int exitCode, QProcess::ExitStatus status) = 0;
    [[nodiscard]] const RunProgressParser& lines() const { return lines_; }
    [[nodiscard]] QProcess* process() const { return child_->process(); }

  private:
    void readStderr();

    ChildProcessGroup* child_;
    RunProgressParser lines_;
};

}  // namespace pipewright::gui
