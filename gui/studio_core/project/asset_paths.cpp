#include "studio_core/project/asset_paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

// Set by gui/CMakeLists.txt from GNUInstallDirs (bin -> share/pipewright).
#ifndef PIPEWRIGHT_INSTALLED_ASSETS_RELATIVE
#define PIPEWRIGHT_INSTALLED_ASSETS_RELATIVE "../share/pipewright"
#endif

namespace pipewright::gui {

namespace {

constexpr QLatin1String kDefaultExample("resnet50-2gpu-pipelined.json");

bool has_examples(const QString& dir) {
    return QFileInfo(QDir(dir).filePath(QStringLiteral("examples"))).isDir();
}

}  // namespace

QStringList asset_dir_candidates() {
    QStringList candidates;
    // applicationDirPath() resolves /proc/self/exe, so a symlink to the
    // program still leads to its own tree.
    const QString app_dir = QCoreApplication::applicationDirPath();
    if (!app_dir.isEmpty()) {
        candidates << QDir(app_dir).filePath(QStringLiteral(PIPEWRIGHT_INSTALLED_ASSETS_RELATIVE));
    }
#ifdef PIPEWRIGHT_ASSETS_DIR
    candidates << QStringLiteral(PIPEWRIGHT_ASSETS_DIR);
#endif
    for (const QString& data_dir :
         QStandardPaths::standardLocations(QStandardPaths::GenericDataLocation)) {
        candidates << QDir(data_dir).filePath(QStringLiteral("pipewright"));
    }
    for (QString& dir : candidates) {
        dir = QDir::cleanPath(dir);
    }
    return candidates;
}

QString assets_dir() {
    for (const QString& dir : asset_dir_candidates()) {
        if (has_examples(dir)) {
            return dir;
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
    const QStringList examples = example_projects();
    for (const QString& path : examples) {
        if (QFileInfo(path).fileName() == kDefaultExample) {
            return path;
        }
    }
    // A trimmed install without the usual example still opens one.
    return examples.value(0);
}

QString docs_dir() {
    QStringList candidates;
    const QString app_dir = QCoreApplication::applicationDirPath();
    if (!app_dir.isEmpty()) {
        candidates << QDir(app_dir).filePath(QStringLiteral(PIPEWRIGHT_INSTALLED_DOCS_RELATIVE));
    }
    candidates << QStringLiteral(PIPEWRIGHT_SOURCE_DOCS_DIR);
    for (const QString& data_dir :
         QStandardPaths::standardLocations(QStandardPaths::GenericDataLocation)) {
        candidates << QDir(data_dir).filePath(QStringLiteral("doc/pipewright/docs"));
    }
    for (const QString& dir : candidates) {
        if (QFileInfo(QDir(dir).filePath(QStringLiteral("studio.md"))).isFile()) {
            return QDir::cleanPath(dir);
        }
    }
    return {};
}

bool is_inside(const QString& path, const QString& dir) {
    if (dir.isEmpty()) {
        return false;
    }
    const QString canonical_dir = QFileInfo(dir).canonicalFilePath();
    const QString canonical_path = QFileInfo(path).canonicalFilePath();
    return !canonical_dir.isEmpty() && canonical_path.startsWith(canonical_dir + QLatin1Char('/'));
}

bool is_shipped_asset(const QString& path) {
    return is_inside(path, assets_dir());
}

}  // namespace pipewright::gui
