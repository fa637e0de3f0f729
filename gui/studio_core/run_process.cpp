#include "studio_core/run_process.h"

namespace pipewright::gui {

RunProcess::RunProcess(QObject* parent) : QObject(parent), child_(new ChildProcessGroup(this)) {
    connect(child_, &ChildProcessGroup::started, this, &RunProcess::started);
    connect(child_, &ChildProcessGroup::stderrReady, this, &RunProcess::readStderr);
    connect(child_, &ChildProcessGroup::stdoutReady, this,
            [this] { stdout_ += child_->process()->readAllStandardOutput(); });
    connect(child_, &ChildProcessGroup::finished, this, &RunProcess::onFinished);
    connect(child_, &ChildProcessGroup::failedToStart, this, &RunProcess::failed);
}

QStringList RunProcess::arguments(const RunRequest& request) {
    QStringList args{QStringLiteral("run"),   request.project_file,    QStringLiteral("--progress"),
                     QStringLiteral("json"),  QStringLiteral("--out"), request.out_dir,
                     QStringLiteral("--json")};
    if (request.steps) {
        args << QStringLiteral("--steps") << QString::number(*request.steps);
    }
    if (request.port) {
        args << QStringLiteral("--port") << QString::number(*request.port);
    }
    if (!request.device.isEmpty()) {
        args << QStringLiteral("--device") << request.device;
    }
    return args;
}

bool RunProcess::start(const RunRequest& request) {
    if (isRunning()) {
        return false;
    }
    request_ = request;
    parser_ = RunProgressParser{};
    stdout_.clear();
    summary_.reset();
    // A relative path the run might write lands in its own folder.
    return child_->start(request.cli, arguments(request), request.out_dir);
}

void RunProcess::cancel() {
    // SIGTERM is what the launcher handles: it stops every rank (SIGTERM,
    // then SIGKILL) and exits with 130.
    child_->cancel();
}

void RunProcess::readStderr() {
    publish(parser_.feed(child_->process()->readAllStandardError()));
}

void RunProcess::publish(const std::vector<RunOutputLine>& lines) {
    for (const RunOutputLine& line : lines) {
        if (line.kind == RunOutputLine::Kind::step) {
            emit progress(line.step.step, line.step.steps);
            emit stepLine(line.step);
        } else {
            emit output(line.text);
        }
    }
}

void RunProcess::onFinished(int exitCode, QProcess::ExitStatus status, bool wasCancelled) {
    readStderr();
    publish(parser_.finish());
    stdout_ += child_->process()->readAllStandardOutput();
    if (wasCancelled) {
        emit cancelled();
        return;
    }
    if (status == QProcess::NormalExit && exitCode == 0) {
        summary_ = parse_run_summary(stdout_);
        emit succeeded();
        return;
    }
    QString message = parser_.failureMessage();
    if (message.isEmpty()) {
        message = status == QProcess::CrashExit
                      ? tr("pipewright run crashed")
                      : tr("pipewright run ended with exit code %1").arg(exitCode);
    }
    emit failed(message);
}

}  // namespace pipewright::gui
