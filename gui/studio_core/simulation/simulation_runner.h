#pragma once

#include <QFutureWatcherBase>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <memory>
#include <optional>
#include <string>

#include "pipewright/core/analysis.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project.h"
#include "pipewright/sim/kernel_breakdown.h"
#include "pipewright/sim/simulation.h"
#include "studio_core/simulation/studio_costs.h"
#include "studio_core/timeline/timeline_layout.h"

namespace pipewright::gui {

// What one simulation of the project on screen produced: either a report, or
// the problems that stopped it (each with its JSON path).
struct SimulationResult {
    Project project;
    Diagnostics diagnostics;
    std::optional<SimulationReport> report;
    std::vector<PipelineStage> stages;
    Schedule schedule;  // lowered, as simulated (for the CSV export)
    std::string error;  // simulator failure (deadlock), not input problems
    // The measured costs it was priced with; null: the analytic estimate.
    std::shared_ptr<const Profile> profile;
    // The catalog with the device calibrations it was priced with; null:
    // the built-in one.
    std::shared_ptr<const DeviceCatalog> catalog;
    // Why a calibrated CPU's kernels take longer in this layout than the
    // calibration measured them (its ranks take turns on the cores); empty:
    // they do not.
    std::string core_sharing;
    // Why a real run of this layout is likely paced by its framework's host
    // rather than by its kernels (host_pace.h); empty: it is not.
    std::string host_pace;
    // Which kernel and rate priced flash attention (attention_note.h);
    // empty without flash attention.
    std::string attention;
    // Per stage, the kernels of one micro-batch's F, I and W (where the time
    // goes, for the block tooltips).
    std::vector<StageKernels> kernels;
    // The report's timeline arranged for drawing, built with the simulation
    // (off the window's thread when it runs in the background): on a
    // 4 M-action timeline the arrangement takes as long as the simulation.
    std::shared_ptr<const TimelineLayout> layout;

    [[nodiscard]] bool ok() const { return report.has_value(); }
};

// Analyses and simulates `project`, priced with the costs' profile where it
// measured a layer (and its transfer fit for every link), and the analytic
// estimate on the costs' catalog (calibrated devices) elsewhere; never throws. `earlier` are the
// problems already found in the file (a refused value the project holds a default for): checks that
// would only find fault with that default are skipped, and they are not
// repeated in the result.
[[nodiscard]] SimulationResult simulate_now(const Project& project, const std::string& base_dir,
                                            StudioCosts costs = {},
                                            const Diagnostics& earlier = {});

// Re-simulates the project after each edit: edits in quick succession are
// collapsed (debounce), the work runs on the thread pool so the window stays
// responsive on large projects, and a result that is older than the latest
// request is dropped so the timeline always matches the layout on screen.
class SimulationRunner : public QObject {
    Q_OBJECT

  public:
    explicit SimulationRunner(QObject* parent = nullptr);
    ~SimulationRunner() override;

    void setDebounceMs(int ms) { timer_.setInterval(ms); }
    // What the simulations from now on are priced with. Does not
    // re-simulate by itself.
    void setCosts(StudioCosts costs) { costs_ = std::move(costs); }
    [[nodiscard]] const StudioCosts& costs() const { return costs_; }
    // Asks for a simulation of `project` once edits settle.
    void request(const Project& project, const QString& baseDir, const Diagnostics& earlier = {});
    // Simulates on the calling thread and publishes the result at once (for
    // --screenshot and for loading a file).
    void runSynchronously(const Project& project, const QString& baseDir,
                          const Diagnostics& earlier = {});

    [[nodiscard]] std::shared_ptr<const SimulationResult> latest() const { return latest_; }
    [[nodiscard]] bool busy() const;

  signals:
    void started();
    void finished();
    // Input problems or a simulator failure, summarised; details in latest().
    void failed(const QString& message);

  private:
    void launch();
    void publish(SimulationResult result);

    QTimer timer_;
    Project pending_;
    QString base_dir_;
    Diagnostics earlier_;
    StudioCosts costs_;
    quint64 generation_ = 0;
    // The newest job; older ones still running belong to this object too
    // (background_job.h) and are deleted as they finish.
    QPointer<QFutureWatcherBase> job_;
    std::shared_ptr<const SimulationResult> latest_;
};

}  // namespace pipewright::gui
