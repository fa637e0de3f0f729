#include "studio_core/processes/cli_process.h"

namespace pipewright::gui {

CliProcess::CliProcess(QObject* parent) : QObject(parent), child_(new ChildProcessGroup(this)) {
    connect(child_, &ChildProcessGroup::started, this, &CliProcess::started);
    connect(child_, &ChildProcessGroup::stderrReady, this, &CliProcess::readStderr);
    connect(child_, &ChildProcessGroup::failedToStart, this, &CliProcess::failed);
    connect(child_, &ChildProcessGroup::finished, this,
            [this](int exitCode, QProcess::ExitStatus status, bool wasCancelled) {
                readStderr();
                for (const RunOutputLine& line : lines_.finish()) {
                    lineRead(line);
                }
                if (wasCancelled) {
                    emit cancelled();
                    return;
                }
                exited(exitCode, status);
            });
}

bool CliProcess::launch(const QString& cli, const QStringList& arguments, const QString& folder) {
    if (isRunning()) {
        return false;
    }
    lines_ = RunProgressParser{};
    return child_->start(cli, arguments, folder);
}

void CliProcess::readStderr() {
    for (const RunOutputLine& line : lines_.feed(child_->process()->readAllStandardError())) {
        lineRead(line);
    }
}

}  // namespace pipewright::gui
