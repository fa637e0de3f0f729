#include "asset_paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace pipewright::gui {

QString assets_dir() {
    QStringList candidates;
    const QString app_dir = QCoreApplication::applicationDirPath();
    if (!app_dir.isEmpty()) {
        candidates << QDir(app_dir).filePath(QStringLiteral("../share/pipewright"));
    }
#ifdef PIPEWRIGHT_ASSETS_DIR
    candidates << QStringLiteral(PIPEWRIGHT_ASSETS_DIR);
#endif
    for (const QString& dir : candidates) {
        if (QFileInfo::exists(QDir(dir).filePath(QStringLiteral("examples")))) {
            return QDir::cleanPath(dir);
        }
    }
    return {};
}

QStringList example_projects() {
    const QString dir = assets_dir();
    if (dir.isEmpty()) {
        return {};
    }
    QDir examples(QDir(dir).filePath(QStringLiteral("examples")));
    QStringList out;
    for (const QFileInfo& info :
         examples.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        out << info.absoluteFilePath();
    }
    return out;
}

QString default_example() {
    const QString dir = assets_dir();
    if (dir.isEmpty()) {
        return {};
    }
    return QDir(dir).filePath(QStringLiteral("examples/resnet50-2gpu-pipelined.json"));
}

}  // namespace pipewright::gui
