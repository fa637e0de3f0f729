#include "document/document_autosave.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "document/project_document.h"
#include "pipewright/core/input_file.h"
#include "pipewright/core/project_io.h"

namespace pipewright::gui {

namespace {

constexpr const char* kFormat = "pipewright-recovery";

QString lock_path(const QString& file) {
    return file.chopped(5) + QStringLiteral(".lock");  // session-….json → session-….lock
}

}  // namespace

QString default_recovery_folder() {
    const QString given = qEnvironmentVariable("PIPEWRIGHT_RECOVERY_DIR");
    if (!given.isEmpty()) {
        return given;
    }
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("recovery"));
}

DocumentAutosave::DocumentAutosave(ProjectDocument* document, const QString& folder,
                                   QObject* parent)
    : QObject(parent), document_(document) {
    QDir().mkpath(folder);
    const QString base = QDir(folder).filePath(QStringLiteral("session-%1-%2")
                                                   .arg(QCoreApplication::applicationPid())
                                                   .arg(QDateTime::currentMSecsSinceEpoch()));
    file_ = base + QStringLiteral(".json");
    lock_ = std::make_unique<QLockFile>(base + QStringLiteral(".lock"));
    // Stale only when its process is gone, never by age: a studio left open
    // for days still holds its file.
    lock_->setStaleLockTime(0);
    (void)lock_->tryLock(0);
    timer_.setSingleShot(true);
    timer_.setInterval(kDelayMs);
    connect(&timer_, &QTimer::timeout, this, &DocumentAutosave::write);
    connect(document_, &ProjectDocument::projectChanged, this, &DocumentAutosave::schedule);
    connect(document_, &ProjectDocument::modifiedChanged, this, [this](bool modified) {
        if (!modified) {
            timer_.stop();
            remove();  // saved, or another file opened: nothing to recover
        } else {
            schedule();
        }
    });
    schedule();  // edits restored from an earlier session are unsaved too
}

DocumentAutosave::~DocumentAutosave() {
    remove();
    lock_->unlock();
}

void DocumentAutosave::schedule() {
    if (document_->isModified()) {
        timer_.start();
    }
}

void DocumentAutosave::flush() {
    if (timer_.isActive()) {
        timer_.stop();
        write();
    }
}

void DocumentAutosave::write() {
    if (!document_->isModified()) {
        remove();
        return;
    }
    const nlohmann::json recovery = {
        {"format", kFormat},
        {"file", document_->filePath().toStdString()},
        {"base_dir", document_->baseDir().toStdString()},
        {"name", document_->displayName().toStdString()},
        {"saved_at", QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString()},
        {"project", project_to_json(document_->project())}};
    try {
        write_file_atomically(file_.toStdString(), recovery.dump(1));
        error_.clear();
    } catch (const std::exception& e) {
        // A full disk must not interrupt editing; the next edit tries again.
        error_ = QString::fromStdString(e.what());
    }
}

void DocumentAutosave::remove() {
    QFile::remove(file_);
}

std::vector<RecoveredProject> orphaned_recoveries(const QString& folder) {
    std::vector<RecoveredProject> found;
    const QDir dir(folder);
    for (const QFileInfo& info :
         dir.entryInfoList({QStringLiteral("session-*.json")}, QDir::Files)) {
        QLockFile lock(lock_path(info.absoluteFilePath()));
        lock.setStaleLockTime(0);
        if (!lock.tryLock(0)) {
            continue;  // its studio is still running
        }
        lock.unlock();
        try {
            const nlohmann::json j =
                nlohmann::json::parse(read_text_file(info.absoluteFilePath().toStdString()));
            if (j.value("format", "") != kFormat) {
                continue;
            }
            Diagnostics problems;
            auto project = project_from_json(j.at("project"), problems);
            if (!project) {
                continue;
            }
            RecoveredProject r;
            r.recoveryFile = info.absoluteFilePath();
            r.project = std::move(*project);
            r.filePath = QString::fromStdString(j.value("file", ""));
            r.baseDir = QString::fromStdString(j.value("base_dir", ""));
            r.name = QString::fromStdString(j.value("name", ""));
            r.savedAt =
                QDateTime::fromString(QString::fromStdString(j.value("saved_at", "")), Qt::ISODate);
            found.push_back(std::move(r));
        } catch (const std::exception&) {
            continue;  // half-written by a foreign tool, or not ours: left alone
        }
    }
    std::sort(found.begin(), found.end(), [](const RecoveredProject& a, const RecoveredProject& b) {
        return a.savedAt > b.savedAt;
    });
    return found;
}

void discard_recovery(const RecoveredProject& recovered) {
    QFile::remove(recovered.recoveryFile);
    QFile::remove(lock_path(recovered.recoveryFile));
}

}  // namespace pipewright::gui
