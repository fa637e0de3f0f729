#include "studio_core/processes/cli_locator.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace pipewright::gui {

namespace {

bool is_executable_file(const QString& path) {
    const QFileInfo info(path);
    return info.isFile() && info.isExecutable();
}

}  // namespace

CliSearch current_cli_search() {
    CliSearch search;
    search.env_value = qEnvironmentVariable("PIPEWRIGHT_CLI");
    search.app_dir = QCoreApplication::applicationDirPath();
    search.path_dirs =
        qEnvironmentVariable("PATH").split(QDir::listSeparator(), Qt::SkipEmptyParts);
    return search;
}

CliLocation locate_cli(const CliSearch& search) {
    if (!search.env_value.isEmpty()) {
        if (is_executable_file(search.env_value)) {
            return {QFileInfo(search.env_value).absoluteFilePath(), {}};
        }
        return {{},
                QObject::tr("PIPEWRIGHT_CLI is set to \"%1\", which is not an executable file")
                    .arg(search.env_value)};
    }
    QStringList candidates;
    if (!search.app_dir.isEmpty()) {
        const QDir app(search.app_dir);
        candidates << app.filePath(QStringLiteral("pipewright"))
                   << QDir::cleanPath(app.filePath(QStringLiteral("../cli/pipewright")));
    }
    for (const QString& dir : search.path_dirs) {
        candidates << QDir(dir).filePath(QStringLiteral("pipewright"));
    }
    for (const QString& path : candidates) {
        if (is_executable_file(path)) {
            return {QFileInfo(path).absoluteFilePath(), {}};
        }
    }
    return {{},
            QObject::tr("The pipewright command line was not found: not next to the studio, "
                        "not in the build tree and not on PATH. Install it, or set "
                        "PIPEWRIGHT_CLI to its path.")};
}

CliLocation locate_cli() {
    return locate_cli(current_cli_search());
}

}  // namespace pipewright::gui
