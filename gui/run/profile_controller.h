#pragma once

#include <QObject>
#include <QStringList>

#include "studio_core/simulation/device_calibrations.h"
#include "window/controller_context.h"

class QAction;
class QMenu;
class QTabWidget;

namespace pipewright::gui {

class RunPanel;

// The costs the simulation prices with: the profile measured on this
// machine (the Run tab's costs bar: "Profile this machine" starts
// `pipewright profile` on the layout on screen and keeps the profile beside
// the project's runs, measured_costs.h) and the device calibrations of
// `pipewright calibrate` (Simulate menu, kept for later sessions).
class ProfileController : public QObject {
    Q_OBJECT

  public:
    ProfileController(const ControllerContext& context, RunPanel* panel, QTabWidget* views,
                      QObject* parent = nullptr);

    // This project's profile and the last session's calibrations, once the
    // window re-simulates on costsChanged.
    void restoreCosts();

    // Writes the layout on screen beside the project's runs and starts
    // `pipewright profile` on it; the profile it writes is used at once.
    // False with the reason in the Run panel when it cannot start.
    bool startProfile();

    // Prices every simulation, comparison and plan with the device
    // calibrations in `paths` (`pipewright calibrate` files; empty: none),
    // for this and later sessions. False with the reason when a file cannot
    // be used; the calibrations in use stay.
    bool useDeviceCalibrations(const QStringList& paths, QString* error);
    [[nodiscard]] const DeviceCalibrations& deviceCalibrations() const { return calibrations_; }

    // Simulate ▸ Use Device Calibration… and Forget Device Calibrations,
    // and Keep GPU Memory Free….
    void addCalibrationActions(QMenu* simulate);

    // Every simulation, comparison and plan keeps `gib` GiB free on every
    // GPU (`--memory-margin`; 0: none), for this and later sessions.
    void setMemoryMargin(double gib);
    [[nodiscard]] double memoryMarginGiB() const;

  signals:
    // The runner's costs changed: what is on screen was priced otherwise.
    void costsChanged();

  private:
    void connectCostsBar();
    // Reads the project's profile, if any, into the costs bar;
    // `preferMeasured` chooses it when there is one.
    void loadMeasuredCosts(bool preferMeasured);
    // The runner takes the costs chosen in the costs bar and the device
    // calibrations.
    void applyCosts();
    void projectFileChanged();
    void restoreDeviceCalibrations();
    void chooseDeviceCalibrations();
    void makePricedCatalog();

    ControllerContext context_;
    RunPanel* panel_;
    QTabWidget* views_;
    DeviceCalibrations calibrations_;
    QAction* forget_calibrations_ = nullptr;
    std::int64_t memory_margin_bytes_ = 0;
    // What the runner prices with: the calibrated catalog (null: the
    // built-in one) less the margin. Made when either changes, not on every
    // applyCosts: the runner re-simulates when its catalog's address does.
    std::shared_ptr<const DeviceCatalog> priced_catalog_;
    // Another project was opened: its own profile, not this one's, applies.
    bool project_replaced_ = true;
};

}  // namespace pipewright::gui
