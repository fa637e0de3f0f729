#include "studio_core/simulation/device_calibrations.h"

#include <QFileInfo>
#include <QObject>

#include "pipewright/core/diagnostics.h"

namespace pipewright::gui {
namespace {

QString problems_text(const Diagnostics& d) {
    QString text = QObject::tr("The device calibration cannot be used:");
    for (const Diagnostic& item : d.items()) {
        text += QStringLiteral("\n  ") + QString::fromStdString(item.path) + QStringLiteral(": ") +
                QString::fromStdString(item.message);
    }
    return text;
}

}  // namespace

std::optional<DeviceCalibrations> load_device_calibrations(const QStringList& paths,
                                                           QString* error) {
    DeviceCalibrations out;
    if (paths.isEmpty()) {
        return out;
    }
    std::vector<std::string> files;
    for (const QString& path : paths) {
        files.push_back(path.toStdString());
    }
    try {
        out.catalog = std::make_shared<const DeviceCatalog>(
            catalog_with_calibration_files(DeviceCatalog::builtin(), files, &out.fits));
    } catch (const InputError& e) {
        if (error != nullptr) {
            *error = problems_text(e.diagnostics());
        }
        return std::nullopt;
    }
    out.paths = paths;
    return out;
}

QString describe_device_calibrations(const DeviceCalibrations& c) {
    QStringList lines;
    for (std::size_t i = 0; i < c.fits.size() && i < static_cast<std::size_t>(c.paths.size());
         ++i) {
        const QString file = QFileInfo(c.paths[static_cast<qsizetype>(i)]).fileName();
        lines << QString::fromStdString(describe_calibration(c.fits[i], file.toStdString()));
    }
    return lines.join(QLatin1Char('\n'));
}

}  // namespace pipewright::gui
