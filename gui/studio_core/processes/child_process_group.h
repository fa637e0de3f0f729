#pragma once

#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTimer>

namespace pipewright::gui {

// A command-line child (pipewright run, pipewright profile) in a process
// group of its own, so that Cancel reaches whatever it started too (a run's
// workers, the profiler's transfer threads). Cancel sends SIGTERM, which
// the command handles; what is left after the grace period is killed with
// the whole group. Deleting it while the child runs does the same, waiting.
class ChildProcessGroup : public QObject {
    Q_OBJECT

  public:
    explicit ChildProcessGroup(QObject* parent = nullptr);
    ~ChildProcessGroup() override;

    // False when a child is already running.
    bool start(const QString& program, const QStringList& arguments,
               const QString& workingDirectory = {});
    void cancel();

    [[nodiscard]] bool isRunning() const;
    [[nodiscard]] bool isCancelling() const { return cancelling_; }
    [[nodiscard]] qint64 processId() const { return pid_; }
    void setCancelGraceMs(int ms) { kill_timer_.setInterval(ms); }
    [[nodiscard]] QProcess* process() const { return process_; }

  signals:
    void started();
    void stderrReady();
    void stdoutReady();
    // Exit of the child; `cancelled` when cancel() asked for it (then the
    // rest of the group has been killed).
    void finished(int exitCode, QProcess::ExitStatus status, bool cancelled);
    // The program could not be started: the reason in words.
    void failedToStart(const QString& message);

  private:
    void killGroup();

    QProcess* process_;
    QTimer kill_timer_;
    qint64 pid_ = 0;
    bool cancelling_ = false;
};

}  // namespace pipewright::gui
