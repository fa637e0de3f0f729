#include "studio_core/run_process.h"

#include <signal.h>
#include <unistd.h>

namespace pipewright::gui {

RunProcess::RunProcess(QObject* parent) : QObject(parent), process_(new QProcess(this)) {
    // The launcher gives its ranks two seconds after SIGTERM before it kills
    // them; this leaves it time to do so and to exit.
    kill_timer_.setInterval(5000);
    kill_timer_.setSingleShot(true);
    connect(&kill_timer_, &QTimer::timeout, this, &RunProcess::killGroup);
    process_->setChildProcessModifier([] { ::setpgid(0, 0); });
    connect(process_, &QProcess::started, this, [this] {
        pid_ = process_->processId();
        emit started();
    });
    connect(process_, &QProcess::readyReadStandardError, this, &RunProcess::readStderr);
    connect(process_, &QProcess::readyReadStandardOutput, this,
            [this] { stdout_ += process_->readAllStandardOutput(); });
    connect(process_, &QProcess::finished, this, &RunProcess::onFinished);
    connect(process_, &QProcess::errorOccurred, this, &RunProcess::onError);
}

RunProcess::~RunProcess() {
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
    cancelling_ = false;
    pid_ = 0;
    process_->setProgram(request.cli);
    process_->setArguments(arguments(request));
    // A relative path the run might write lands in its own folder.
    process_->setWorkingDirectory(request.out_dir);
    process_->start();
    return true;
}

bool RunProcess::isRunning() const {
    return process_->state() != QProcess::NotRunning;
}

qint64 RunProcess::processId() const {
    return pid_;
}

void RunProcess::cancel() {
    if (!isRunning() || cancelling_) {
        return;
    }
    cancelling_ = true;
    // SIGTERM is what the launcher handles: it stops every rank (SIGTERM,
    // then SIGKILL) and exits with 130.
    process_->terminate();
    kill_timer_.start();
}

void RunProcess::killGroup() {
    if (pid_ > 0) {
        ::kill(static_cast<pid_t>(-pid_), SIGKILL);
    }
}

void RunProcess::readStderr() {
    publish(parser_.feed(process_->readAllStandardError()));
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

void RunProcess::onFinished(int exitCode, QProcess::ExitStatus status) {
    kill_timer_.stop();
    readStderr();
    publish(parser_.finish());
    stdout_ += process_->readAllStandardOutput();
    if (cancelling_) {
        // Whatever is left of the group goes too; a clean exit left nothing.
        killGroup();
        cancelling_ = false;
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

void RunProcess::onError(QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) {
        emit failed(tr("cannot start %1: %2").arg(request_.cli, process_->errorString()));
    }
}

}  // namespace pipewright::gui
