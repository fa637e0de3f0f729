#include "studio_core/profile_process.h"

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
    if (line.trimmed().startsWith(QStringLiteral("collectives: "))) {
        ProfileProgress p;
        p.collectives = true;
        return p;
    }
    return std::nullopt;
}

ProfileProcess::ProfileProcess(QObject* parent)
    : QObject(parent), child_(new ChildProcessGroup(this)) {
    // The profiler has no ranks to stop: a short grace is enough.
    child_->setCancelGraceMs(3000);
    // The table it prints on success repeats what the file holds.
    child_->process()->setStandardOutputFile(QProcess::nullDevice());
    connect(child_, &ChildProcessGroup::stderrReady, this, &ProfileProcess::readStderr);
    connect(child_, &ChildProcessGroup::finished, this, &ProfileProcess::onFinished);
    connect(child_, &ChildProcessGroup::failedToStart, this, &ProfileProcess::failed);
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
    return child_->start(request.cli, arguments(request));
}

void ProfileProcess::cancel() {
    child_->cancel();
}

void ProfileProcess::readStderr() {
    for (const RunOutputLine& line : lines_.feed(child_->process()->readAllStandardError())) {
        if (const auto p = parse_profile_progress(line.text)) {
            // The transfer and the collectives follow the last round: keep
            // the rounds' count.
            progress_ = p->transfer || p->collectives
                            ? ProfileProgress{progress_.rounds, progress_.rounds, p->transfer,
                                              p->collectives}
                            : *p;
            emit progress(progress_);
        }
        emit output(line.text);
    }
}

void ProfileProcess::onFinished(int exitCode, QProcess::ExitStatus status, bool wasCancelled) {
    readStderr();
    for (const RunOutputLine& line : lines_.finish()) {
        emit output(line.text);
    }
    if (wasCancelled) {
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
