#include "studio_core/processes/run_process.h"

namespace pipewright::gui {

RunProcess::RunProcess(QObject* parent) : CliProcess(parent) {
    connect(process(), &QProcess::readyReadStandardOutput, this,
            [this] { stdout_ += process()->readAllStandardOutput(); });
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
    stdout_.clear();
    summary_.reset();
    // A relative path the run might write lands in its own folder.
    return launch(request.cli, arguments(request), request.out_dir);
}

void RunProcess::lineRead(const RunOutputLine& line) {
    if (line.kind == RunOutputLine::Kind::step) {
        emit progress(line.step.step, line.step.steps);
        emit stepLine(line.step);
    } else {
        emit output(line.text);
    }
}

void RunProcess::exited(int exitCode, QProcess::ExitStatus status) {
    stdout_ += process()->readAllStandardOutput();
    if (status == QProcess::NormalExit && exitCode == 0) {
        summary_ = parse_run_summary(stdout_);
        emit succeeded();
        return;
    }
    QString message = lines().failureMessage();
    if (message.isEmpty()) {
        message = status == QProcess::CrashExit
                      ? tr("pipewright run crashed")
                      : tr("pipewright run ended with exit code %1").arg(exitCode);
    }
    emit failed(message);
}

}  // namespace pipewright::gui
