#include "run/profile_controller.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>

#include "document/project_document.h"
#include "pipewright/core/analysis.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/launch_layout.h"
#include "pipewright/core/memory_headroom.h"
#include "run/costs_bar.h"
#include "run/run_controller.h"
#include "run/run_panel.h"
#include "studio_core/processes/run_folder.h"
#include "studio_core/simulation/measured_costs.h"
#include "studio_core/simulation/simulation_runner.h"
#include "window/file_dialogs.h"
#include "window/message_bar.h"

namespace pipewright::gui {

namespace {

// The most processes a real run of `project` starts on one machine, for the
// profile's warning about more CPU ranks than its machine has cores (as the
// simulation counts them); 0 when it does not analyse.
int ranks_per_machine(const Project& project) {
    Diagnostics problems;
    const auto analyzed = analyze_project(project, {}, problems);
    return analyzed ? launch_layout(*analyzed).ranks_per_node : 0;
}
const QString kCalibrationsKey = QStringLiteral("deviceCalibrations");
const QString kMemoryMarginKey = QStringLiteral("memoryMarginGiB");
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A margin of `gib` GiB in bytes, within --memory-margin's 0 to 1024 GiB.
std::int64_t margin_bytes(double gib) {
    return gib > 0 ? static_cast<std::int64_t>(std::min(gib, 1024.0) * kGiB) : 0;
}
}  // namespace

ProfileController::ProfileController(const ControllerContext& context, RunPanel* panel,
                                     QTabWidget* views, QObject* parent)
    : QObject(parent), context_(context), panel_(panel), views_(views) {
    connectCostsBar();
    connect(context_.document, &ProjectDocument::fileChanged, this,
            &ProfileController::projectFileChanged);
    connect(context_.document, &ProjectDocument::projectReplaced, this,
            [this] { project_replaced_ = true; });
}

void ProfileController::connectCostsBar() {
    CostsBar* costs = panel_->costsBar();
    connect(costs, &CostsBar::profileRequested, this, [this] { startProfile(); });
    connect(costs, &CostsBar::useMeasuredChanged, this, &ProfileController::applyCosts);
    connect(costs, &CostsBar::profileSucceeded, this, [this] {
        loadMeasuredCosts(true);
        context_.status->showMessage(
            tr("Profiled: the simulation now uses the costs measured on this machine"), 8000);
    });
    connect(costs, &CostsBar::profileFailed, this, [this](const QString& message) {
        context_.status->showMessage(
            tr("Profile failed: %1").arg(message.section(QLatin1Char('\n'), 0, 0)), 10000);
    });
}

void ProfileController::restoreCosts() {
    memory_margin_bytes_ = margin_bytes(QSettings().value(kMemoryMarginKey, 0.0).toDouble());
    makePricedCatalog();
    projectFileChanged();
    restoreDeviceCalibrations();
}

void ProfileController::setMemoryMargin(double gib) {
    memory_margin_bytes_ = margin_bytes(gib);
    QSettings().setValue(kMemoryMarginKey, memoryMarginGiB());
    makePricedCatalog();
    applyCosts();
}

void ProfileController::makePricedCatalog() {
    priced_catalog_ =
        memory_margin_bytes_ > 0
            ? std::make_shared<const DeviceCatalog>(with_memory_margin(
                  calibrations_.catalog ? *calibrations_.catalog : DeviceCatalog::builtin(),
                  memory_margin_bytes_))
            : calibrations_.catalog;
}

double ProfileController::memoryMarginGiB() const {
    return static_cast<double>(memory_margin_bytes_) / kGiB;
}

void ProfileController::loadMeasuredCosts(bool preferMeasured) {
    const Project& project = context_.document->project();
    const QString path = profile_path_for(runs_dir_of(*context_.document),
                                          QString::fromStdString(project.model.name));
    QString problem;
    const auto costs = load_measured_costs(path, &problem);
    CostsBar* bar = panel_->costsBar();
    const bool was_measured = bar->useMeasured();
    bar->setMeasuredCosts(
        costs,
        costs ? describe_measured_costs(*costs, project.model, ranks_per_machine(project))
              : QString(),
        problem);
    // A profile of another model would only replace the links: not by default.
    bar->setUseMeasured(
        costs && (preferMeasured ? measured_costs_fit(*costs, project.model) : was_measured));
    applyCosts();
}

void ProfileController::applyCosts() {
    const CostsBar* bar = panel_->costsBar();
    StudioCosts costs(bar->useMeasured() ? bar->measuredCosts()->profile : nullptr,
                      priced_catalog_);
    costs.memory_margin_bytes = memory_margin_bytes_;
    if (!(costs == context_.runner->costs())) {
        context_.runner->setCosts(std::move(costs));
        emit costsChanged();
    }
}

void ProfileController::projectFileChanged() {
    // Save As moves the project's runs folder: its profile goes along.
    const auto& costs = panel_->costsBar()->measuredCosts();
    const QString runs = runs_dir_of(*context_.document);
    const QString profile =
        profile_path_for(runs, QString::fromStdString(context_.document->project().model.name));
    if (!project_replaced_ && costs && QFileInfo(profile).absoluteFilePath() != costs->path &&
        !QFileInfo::exists(profile) && QDir().mkpath(runs)) {
        QFile::copy(costs->path, profile);
    }
    loadMeasuredCosts(project_replaced_);
    project_replaced_ = false;
}

bool ProfileController::startProfile() {
    if (!ready_to_launch(*panel_, *views_)) {
        return false;
    }
    const Project& project = context_.document->project();
    const QString model = QString::fromStdString(project.model.name);
    const QString dir = runs_dir_of(*context_.document);
    if (!QDir().mkpath(dir)) {
        panel_->showError(tr("Cannot create the folder %1 for the profile").arg(dir));
        return false;
    }
    // The layout profiled stays beside its profile, as a run folder keeps
    // the project it ran.
    ProfileRequest request;
    request.cli = panel_->cli().path;
    request.out_file = profile_path_for(dir, model);
    request.project_file = request.out_file.chopped(5) + QStringLiteral(".project.json");
    request.device = panel_->device();
    QString error;
    if (!write_run_project(project, context_.document->baseDir(), request.project_file, &error)) {
        panel_->showError(tr("Cannot write %1: %2").arg(request.project_file, error));
        return false;
    }
    panel_->costsBar()->startProfile(request);
    return true;
}

bool ProfileController::useDeviceCalibrations(const QStringList& paths, QString* error) {
    QStringList absolute;
    for (const QString& path : paths) {
        absolute << QFileInfo(path).absoluteFilePath();
    }
    auto loaded = load_device_calibrations(absolute, error);
    if (!loaded) {
        return false;
    }
    calibrations_ = std::move(*loaded);
    makePricedCatalog();
    QSettings().setValue(kCalibrationsKey, calibrations_.paths);
    if (forget_calibrations_ != nullptr) {
        forget_calibrations_->setEnabled(!calibrations_.empty());
    }
    applyCosts();
    return true;
}

void ProfileController::restoreDeviceCalibrations() {
    const QStringList paths = QSettings().value(kCalibrationsKey).toStringList();
    if (paths.isEmpty()) {
        return;
    }
    QString error;
    if (!useDeviceCalibrations(paths, &error)) {
        // A file moved or broken since: said once, and no longer used.
        QSettings().remove(kCalibrationsKey);
        context_.messages->showMessage(
            tr("The device calibration of the last session is not used: %1").arg(error),
            MessageBar::Kind::problem);
    }
}

void ProfileController::chooseDeviceCalibrations() {
    const QStringList paths =
        open_file_names(context_.window, tr("Use Device Calibrations"),
                        QFileInfo(context_.document->filePath()).absolutePath(),
                        tr("Device calibrations (*.json);;All files (*)"));
    if (paths.isEmpty()) {
        return;
    }
    QString error;
    if (!useDeviceCalibrations(paths, &error)) {
        context_.messages->showMessage(error, MessageBar::Kind::problem);
        return;
    }
    context_.status->showMessage(
        tr("Devices priced as calibrated: %1")
            .arg(describe_device_calibrations(calibrations_).section(QLatin1Char('\n'), 0, 0)),
        10000);
}

void ProfileController::addCalibrationActions(QMenu* simulate) {
    QAction* calibrate = simulate->addAction(tr("&Use Device Calibration…"), this,
                                             [this] { chooseDeviceCalibrations(); });
    calibrate->setObjectName(QStringLiteral("useCalibrationAction"));
    calibrate->setStatusTip(
        tr("Price the devices with kernels measured by `pipewright calibrate` (for every "
           "project, until forgotten)"));
    forget_calibrations_ = simulate->addAction(tr("&Forget Device Calibrations"), this, [this] {
        (void)useDeviceCalibrations({}, nullptr);
        context_.status->showMessage(tr("Devices priced with the built-in catalog"), 8000);
    });
    forget_calibrations_->setObjectName(QStringLiteral("forgetCalibrationsAction"));
    forget_calibrations_->setEnabled(!calibrations_.empty());
    QAction* margin = simulate->addAction(tr("&Keep GPU Memory Free…"), this, [this] {
        bool ok = false;
        const double gib = QInputDialog::getDouble(
            context_.window, tr("Keep GPU Memory Free"),
            tr("GiB every GPU keeps free beside what the memory model counts\n"
               "(NCCL's buffers, the allocator's fragmentation):"),
            memoryMarginGiB(), 0, 1024, 1, &ok);
        if (ok) {
            setMemoryMargin(gib);
            context_.status->showMessage(gib > 0
                                             ? tr("Every GPU keeps %1 GiB free").arg(gib, 0, 'f', 1)
                                             : tr("GPUs fit up to their capacity"),
                                         8000);
        }
    });
    margin->setObjectName(QStringLiteral("memoryMarginAction"));
    margin->setStatusTip(
        tr("Fit every GPU with this much to spare, as --memory-margin does (for every project, "
           "until changed)"));
}

}  // namespace pipewright::gui
