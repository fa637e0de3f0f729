#pragma once

#include <QWidget>
#include <optional>

#include "studio_core/processes/cli_locator.h"
#include "studio_core/processes/profile_process.h"
#include "studio_core/simulation/measured_costs.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace pipewright::gui {

// Where the simulation's costs come from, on the Run tab: the analytic
// estimate or the profile measured on this machine, and "Profile this
// machine", which measures one with `pipewright profile` (Cancel stops it).
// ProfileController (profile_controller.h) keeps the profile with the
// project and re-prices the simulation; this widget shows and asks.
class CostsBar : public QWidget {
    Q_OBJECT

  public:
    explicit CostsBar(QWidget* parent = nullptr);

    void setCli(const CliLocation& cli);
    // The project's profile, if it has one, with its description (what it
    // measured, for this model); `problem` says why a profile file that
    // exists cannot be used.
    void setMeasuredCosts(const std::optional<MeasuredCosts>& costs, const QString& description,
                          const QString& problem = {});
    [[nodiscard]] const std::optional<MeasuredCosts>& measuredCosts() const { return costs_; }

    // Whether the simulation is to use the measured profile (only when there
    // is one).
    [[nodiscard]] bool useMeasured() const;
    void setUseMeasured(bool measured);

    void startProfile(const ProfileRequest& request);
    void cancelProfile();
    [[nodiscard]] bool isProfiling() const;
    // Off while a run trains: a profile beside it measures nothing useful.
    void setOtherWorkRunning(bool running);

    [[nodiscard]] QPushButton* profileButton() const { return profile_; }
    [[nodiscard]] QPushButton* cancelButton() const { return cancel_; }
    [[nodiscard]] QComboBox* costsCombo() const { return costs_combo_; }
    [[nodiscard]] QString descriptionText() const;
    [[nodiscard]] ProfileProcess* process() const { return process_; }

  signals:
    void profileRequested();
    // The user chose analytic or measured costs.
    void useMeasuredChanged(bool measured);
    void profileStarted();
    void profileProgress(const pipewright::gui::ProfileProgress& progress);
    void profileOutput(const QString& line);
    // The profile is in the request's out_file.
    void profileSucceeded(const QString& path);
    void profileFailed(const QString& message);
    void profileCancelled();
    // isProfiling() changed.
    void profilingChanged(bool profiling);

  private:
    void updateControls();

    ProfileProcess* process_;
    CliLocation cli_;
    std::optional<MeasuredCosts> costs_;
    bool other_work_ = false;
    QComboBox* costs_combo_ = nullptr;
    QPushButton* profile_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QLabel* description_ = nullptr;
};

}  // namespace pipewright::gui
