#include "studio_core/processes/child_process_group.h"

#include <signal.h>
#include <unistd.h>

namespace pipewright::gui {

ChildProcessGroup::ChildProcessGroup(QObject* parent)
    : QObject(parent), process_(new QProcess(this)) {
    kill_timer_.setInterval(5000);
    kill_timer_.setSingleShot(true);
    connect(&kill_timer_, &QTimer::timeout, this, &ChildProcessGroup::killGroup);
    process_->setChildProcessModifier([] { ::setpgid(0, 0); });
    connect(process_, &QProcess::started, this, [this] {
        pid_ = process_->processId();
        emit started();
    });
    connect(process_, &QProcess::readyReadStandardError, this, &ChildProcessGroup::stderrReady);
    connect(process_, &QProcess::readyReadStandardOutput, this, &ChildProcessGroup::stdoutReady);
    connect(process_, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        kill_timer_.stop();
        const bool cancelled = cancelling_;
        if (cancelled) {
            // Whatever is left of the group goes too; a clean exit left nothing.
            killGroup();
            cancelling_ = false;
        }
        emit finished(exitCode, status, cancelled);
    });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            emit failedToStart(
                tr("cannot start %1: %2").arg(process_->program(), process_->errorString()));
        }
    });
}

ChildProcessGroup::~ChildProcessGroup() {
    if (isRunning()) {
        // No signals from here on: whoever listened may be going away too.
        process_->disconnect(this);
        process_->terminate();
        if (!process_->waitForFinished(kill_timer_.interval())) {
            killGroup();
            process_->waitForFinished(2000);
        }
    }
}

bool ChildProcessGroup::start(const QString& program, const QStringList& arguments,
                              const QString& workingDirectory) {
    if (isRunning()) {
        return false;
    }
    cancelling_ = false;
    pid_ = 0;
    process_->setProgram(program);
    process_->setArguments(arguments);
    process_->setWorkingDirectory(workingDirectory);
    process_->start();
    return true;
}

bool ChildProcessGroup::isRunning() const {
    return process_->state() != QProcess::NotRunning;
}

void ChildProcessGroup::cancel() {
    if (!isRunning() || cancelling_) {
        return;
    }
    cancelling_ = true;
    process_->terminate();
    kill_timer_.start();
}

void ChildProcessGroup::killGroup() {
    if (pid_ > 0) {
        ::kill(static_cast<pid_t>(-pid_), SIGKILL);
    }
}

}  // namespace pipewright::gui
