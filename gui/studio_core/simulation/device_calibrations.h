#pragma once

#include <QString>
#include <QStringList>
#include <memory>
#include <optional>
#include <vector>

#include "pipewright/core/device_catalog.h"
#include "pipewright/sim/device_calibration_fit.h"

// The device calibrations the studio prices with (Simulate ▸ Use Device
// Calibration…): files written by `pipewright calibrate`, as the command
// line's `--calibration` reads them. They describe hardware, not a project,
// so the studio keeps the choice in its settings for every project.
namespace pipewright::gui {

struct DeviceCalibrations {
    QStringList paths;
    std::shared_ptr<const DeviceCatalog> catalog;  // null when there are none
    std::vector<CalibrationFit> fits;              // one per path, in order

    [[nodiscard]] bool empty() const { return paths.isEmpty(); }
};

// Reads every file into one calibrated catalog. nullopt with `error` naming
// the file and each problem (a field with its JSON path, a device the
// catalog lacks, two files of one device) when any cannot be used.
[[nodiscard]] std::optional<DeviceCalibrations> load_device_calibrations(const QStringList& paths,
                                                                         QString* error);

// "H100-SXM kernels as measured on NVIDIA H100 80GB HBM3 (h100.json): …"
// one line per calibration; empty without any.
[[nodiscard]] QString describe_device_calibrations(const DeviceCalibrations& calibrations);

}  // namespace pipewright::gui
