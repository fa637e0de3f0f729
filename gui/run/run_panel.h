#pragma once

#include <QWidget>
#include <optional>
#include <vector>

#include "studio_core/processes/cli_locator.h"
#include "studio_core/processes/run_folder.h"
#include "studio_core/processes/run_process.h"
#include "studio_core/simulation/run_comparison.h"

class QLabel;
class QListView;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QComboBox;
class QSpinBox;
class QSplitter;
class QTableView;

namespace pipewright::gui {

class PastRunsModel;
class RunComparisonModel;

class CostsBar;

// The Run tab: start a real run of the layout on screen on the local
// devices, follow it (progress bar, live log, Cancel), read the simulated vs
// measured table, and reopen past runs; above them, the costs the simulation
// uses and Profile this machine (sharing the progress bar and the log).
// RunController (run_controller.h) prepares each run (writes the project
// into a fresh run folder) and draws the measured timeline; this widget only
// shows and asks.
class RunPanel : public QWidget {
    Q_OBJECT

  public:
    explicit RunPanel(QWidget* parent = nullptr);

    // The command line runs come from; without one the Run button is off and
    // its tooltip says why.
    void setCli(const CliLocation& cli);
    [[nodiscard]] const CliLocation& cli() const { return cli_; }
    // Steps a run makes unless the user changes it (the project's).
    void setDefaultSteps(int steps);
    [[nodiscard]] int steps() const;
    // Where the ranks run, as `run --device` takes it: auto, cpu or cuda.
    [[nodiscard]] QString device() const;

    void start(const RunRequest& request);
    void cancel();
    // Forgets the last run's log, status and progress (another project was
    // opened); a run still going keeps them.
    void clearForNewProject();
    [[nodiscard]] bool isRunning() const;
    [[nodiscard]] RunProcess* process() const { return process_; }

    // The folder past runs are listed from; refreshes the list.
    // Past runs are listed from `dir`: those of `current`'s model, each
    // marked when it ran another layout.
    void setRunsDir(const QString& dir, const Project& current);
    void refreshPastRuns();
    [[nodiscard]] const std::vector<PastRun>& pastRuns() const;
    void selectPastRun(const QString& dir);

    // The table for the run shown; `note` warns when the run's layout is not
    // the one on screen.
    void showComparison(const QString& runName, const std::vector<RunComparisonRow>& rows,
                        const QString& note);
    void clearComparison(const QString& why);
    // A failure or problem to show above the log (empty hides it).
    void showError(const QString& message);

    // The costs the simulation uses, and Profile this machine.
    [[nodiscard]] CostsBar* costsBar() const { return costs_; }
    [[nodiscard]] QPushButton* runButton() const { return run_; }
    [[nodiscard]] QPushButton* cancelButton() const { return cancel_; }
    [[nodiscard]] QProgressBar* progressBar() const { return progress_; }
    [[nodiscard]] QTableView* comparisonTable() const { return table_; }
    [[nodiscard]] QListView* pastRunList() const { return past_list_; }
    [[nodiscard]] QString logText() const;
    [[nodiscard]] QString errorText() const;
    [[nodiscard]] QString statusText() const;

  signals:
    // The user asked for a run of the layout on screen.
    void runRequested();
    // Export Launch Files… was pressed.
    void launchFilesRequested();
    // A run ended well; its folder holds the measured timeline.
    void runSucceeded(const QString& dir);
    void runFailed(const QString& message);
    // Whether the Run button is enabled (and its tooltip) may have changed.
    void runAvailabilityChanged();
    // The user picked a past run to show.
    void pastRunActivated(const QString& dir);

  protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void updateButtons();
    void fitTableHeight();
    void showWholeTable();
    void setStatus(const QString& text);
    void log(const QString& line);
    void resetProgress();
    void connectProfile();

    RunProcess* process_ = nullptr;
    CliLocation cli_;
    QString runs_dir_;
    std::optional<Project> current_;  // the project on screen, for Past runs
    CostsBar* costs_ = nullptr;
    QPushButton* run_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QSpinBox* steps_ = nullptr;
    QComboBox* device_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* error_ = nullptr;
    QLabel* table_title_ = nullptr;
    QLabel* note_ = nullptr;
    QSplitter* comparison_split_ = nullptr;  // the comparison over the log
    QWidget* comparison_box_ = nullptr;      // the title, the table and its note
    QTableView* table_ = nullptr;
    RunComparisonModel* comparison_ = nullptr;
    QListView* past_list_ = nullptr;
    PastRunsModel* past_model_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
};

}  // namespace pipewright::gui
