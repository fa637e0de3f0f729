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

ProfileProcess::ProfileProcess(QObject* parent) : CliProcess(parent) {
    // The profiler has no ranks to stop: a short grace is enough.
    setCancelGraceMs(3000);
    // The table it prints on success repeats what the file holds.
    process()->setStandardOutputFile(QProcess::nullDevice());
}

QStringList ProfileProcess::warnings() const {
    QStringList out;
    for (const QString& line : lines().messages()) {
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
    progress_ = ProfileProgress{};
    return launch(request.cli, arguments(request));
}

void ProfileProcess::lineRead(const RunOutputLine& line) {
    if (const auto p = parse_profile_progress(line.text)) {
        // The transfer and the collectives follow the last round: keep the
        // rounds' count.
        progress_ =
            p->transfer || p->collectives
                ? ProfileProgress{progress_.rounds, progress_.rounds, p->transfer, p->collectives}
                : *p;
        emit progress(progress_);
    }
    emit output(line.text);
}

void ProfileProcess::exited(int exitCode, QProcess::ExitStatus status) {
    if (status == QProcess::NormalExit && exitCode == 0) {
        emit succeeded();
        return;
    }
    // The profiler's own reason is its last "pipewright: ..." line, with the
    // problems it lists indented under it.
    const QStringList& messages = lines().messages();
    qsizetype reason = -1;
    for (qsizetype i = 0; i < messages.size(); ++i) {
        if (messages[i].startsWith(QStringLiteral("pipewright:")) &&
            !messages[i].startsWith(QStringLiteral("pipewright: profiling ")) &&
            !messages[i].startsWith(QStringLiteral("pipewright: warning: "))) {
            reason = i;
        }
    }
    QString message;
    if (reason >= 0) {
        QStringList why{messages[reason].mid(11).trimmed()};
        for (qsizetype i = reason + 1; i < messages.size() && why.size() < 12; ++i) {
            if (!parse_profile_progress(messages[i])) {
                why << messages[i];
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
