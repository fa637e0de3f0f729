#include "studio_core/processes/profile_process.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace pipewright::gui {

std::optional<ProfileProgress> parse_profile_event(const QString& line) {
    if (!line.startsWith(QLatin1Char('{'))) {
        return std::nullopt;
    }
    const QJsonObject event = QJsonDocument::fromJson(line.toUtf8()).object();
    if (event.value(QStringLiteral("event")).toString() != QStringLiteral("profile")) {
        return std::nullopt;
    }
    const QString phase = event.value(QStringLiteral("phase")).toString();
    ProfileProgress p;
    if (phase == QStringLiteral("transfer")) {
        p.transfer = true;
        return p;
    }
    if (phase == QStringLiteral("collectives")) {
        p.collectives = true;
        return p;
    }
    if (phase != QStringLiteral("layers")) {
        return std::nullopt;  // a phase of a newer profiler
    }
    p.round = event.value(QStringLiteral("round")).toInt();
    p.rounds = event.value(QStringLiteral("rounds")).toInt();
    p.size = event.value(QStringLiteral("size")).toInt(1);
    p.sizes = event.value(QStringLiteral("sizes")).toInt(1);
    if (p.rounds < 1 || p.round < 1 || p.round > p.rounds || p.size < 1 || p.size > p.sizes) {
        return std::nullopt;
    }
    return p;
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
    QStringList args{QStringLiteral("profile"),    request.project_file,
                     QStringLiteral("--out"),      request.out_file,
                     QStringLiteral("--progress"), QStringLiteral("json")};
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
    if (const auto p = parse_profile_event(line.text)) {
        if (p->transfer || p->collectives) {
            // They follow the last round: the rounds are all done.
            progress_.round = progress_.rounds;
            progress_.size = progress_.sizes;
            progress_.transfer = p->transfer;
            progress_.collectives = p->collectives;
        } else {
            progress_ = *p;
        }
        emit progress(progress_);
        return;  // progress, not a line for the log
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
            why << messages[i];
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
