#include "studio_core/device_calibrations.h"

#include <QFileInfo>
#include <QObject>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/quantity_format.h"

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
        const CalibrationFit& f = c.fits[i];
        lines << QObject::tr(
                     "%1 as measured on %2 (%3): launch %4, copies at %5/s, %6 GEMMs "
                     "%7–%8 × the model's time")
                     .arg(QString::fromStdString(f.spec),
                          f.device_name.empty() ? QObject::tr("its device")
                                                : QString::fromStdString(f.device_name),
                          QFileInfo(c.paths[static_cast<qsizetype>(i)]).fileName(),
                          QString::fromStdString(format_duration(f.kernel_overhead_s)),
                          QString::fromStdString(format_bytes(f.copy_bandwidth_GBps * 1e9)),
                          QString::fromStdString(std::string(to_string(f.dtype))),
                          QString::number(f.gemm_ratio_min, 'f', 2),
                          QString::number(f.gemm_ratio_max, 'f', 2));
    }
    return lines.join(QLatin1Char('\n'));
}

}  // namespace pipewright::gui
