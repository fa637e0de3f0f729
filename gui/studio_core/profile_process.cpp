#include "studio_core/profile_process.h"

#include <signal.h>
#include <unistd.h>

#include <QRegularExpression>

namespace pipewright::gui {

std::optional<ProfileProgress> parse_profile_progress(const QString& line) {
    static const QRegularExpression round(QStringLiteral(R"(^\s*round (\d+)/(\d+)\b)"));
    if (const auto m = round.match(line); m.hasMatch()) {
        ProfileProgress p;
        p.round = m.captured(1).toInt();
        p.rounds = m.captured(2).toInt();
        if (p.rounds > 0 && p.round >= 1 && p.round <= p.rounds) {
            return p;
        }
        return std::nullopt;
    }
    if (line.trimmed().startsWith(QStringLiteral("transfer: ping-pong"))) {
        ProfileProgress p;
        p.transfer = true;
        return p;
    }
    return std::nullopt;
}

ProfileProcess::ProfileProcess(QObject* parent) : QObject(parent), process_(new QProcess(this)) {
    kill_timer_.setInterval(3000);
    kill_timer_.setSingleShot(true);
    connect(&kill_timer_, &QTimer::timeout, this, &ProfileProcess::killGroup);
    process_->setChildProcessModifier([] { ::setpgid(0, 0); });
    // The table it prints on success repeats what the file holds.
    process_->setStandardOutputFile(QProcess::nullDevice());
    connect(process_, &QProcess::started, this, [this] { pid_ = process_->processId(); });
    connect(process_, &QProcess::readyReadStandardError, this, &ProfileProcess::readStderr);
    connect(process_, &QProcess::finished, this, &ProfileProcess::onFinished);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            emit failed(tr("cannot start %1: %2").arg(request_.cli, process_->errorString()));
        }
    });
}

ProfileProcess::~ProfileProcess() {
    if (isRunning()) {
        process_->disconnect(this);
        killGroup();
        process_->waitForFinished(2000);
    }
}

QStringList ProfileProcess::warnings() const {
    QStringList out;
    for (const QString& line : lines_.messages()) {
        if (line.startsWith(QStringLiteral("pipewright: warning: "))) {
            out << line.mid(21);
        }
    }
    return out;
}

QStringList ProfileProcess::arguments(const ProfileRequest& request) {
    QStringList args{QStringLiteral("profile"), request.project_file, QStringLiteral("--out"),
                     request.out_file};
    if (!request.device.isEmpty()) {
        args << QStringLiteral("--device") << request.device;
    }
    if (request.repeats) {
        args << QStringLiteral("--repeats") << QString::number(*request.repeats);
    }
    if (request.warmup) {
        args << QStringLiteral("--warmup") << QString::number(*request.warmup);
    }
    return args;
}

bool ProfileProcess::start(const ProfileRequest& request) {
    if (isRunning()) {
        return false;
    }
    request_ = request;
    lines_ = RunProgressParser{};
    progress_ = ProfileProgress{};
    cancelling_ = false;
    pid_ = 0;
    process_->setProgram(request.cli);
    process_->setArguments(arguments(request));
    process_->start();
    return true;
}

bool ProfileProcess::isRunning() const {
    return process_->state() != QProcess::NotRunning;
}

void ProfileProcess::cancel() {
    if (!isRunning() || cancelling_) {
        return;
    }
    cancelling_ = true;
    process_->terminate();
    kill_timer_.start();
}

void ProfileProcess::killGroup() {
    if (pid_ > 0) {
        ::kill(static_cast<pid_t>(-pid_), SIGKILL);
    }
}

void ProfileProcess::readStderr() {
    for (const RunOutputLine& line : lines_.feed(process_->readAllStandardError())) {
        if (const auto p = parse_profile_progress(line.text)) {
            // The transfer follows the last round: keep the rounds' count.
            progress_ =
                p->transfer ? ProfileProgress{progress_.rounds, progress_.rounds, true} : *p;
            emit progress(progress_);
        }
        emit output(line.text);
    }
}

void ProfileProcess::onFinished(int exitCode, QProcess::ExitStatus status) {
    kill_timer_.stop();
    readStderr();
    for (const RunOutputLine& line : lines_.finish()) {
        emit output(line.text);
    }
    if (cancelling_) {
        killGroup();
        cancelling_ = false;
        emit cancelled();
        return;
    }
    if (status == QProcess::NormalExit && exitCode == 0) {
        emit succeeded();
        return;
    }
    // The profiler's own reason is its last "pipewright: ..." line, with the
    // problems it lists indented under it.
    const QStringList& lines = lines_.messages();
    qsizetype reason = -1;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (lines[i].startsWith(QStringLiteral("pipewright:")) &&
            !lines[i].startsWith(QStringLiteral("pipewright: profiling ")) &&
            !lines[i].startsWith(QStringLiteral("pipewright: warning: "))) {
            reason = i;
        }
    }
    QString message;
    if (reason >= 0) {
        QStringList why{lines[reason].mid(11).trimmed()};
        for (qsizetype i = reason + 1; i < lines.size() && why.size() < 12; ++i) {
            if (!parse_profile_progress(lines[i])) {
                why << lines[i];
            }
        }
        message = why.join(QLatin1Char('\n'));
    }
    if (message.isEmpty()) {
        message = status == QProcess::CrashExit
                      ? tr("pipewright profile crashed")
                      : tr("pipewright profile ended with exit code %1").arg(exitCode);
    }
    emit failed(message);
}

}  // namespace pipewright::gui
