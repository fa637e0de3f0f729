#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "pipewright/core/project.h"
#include "pipewright/sim/planner.h"
#include "studio_core/simulation/studio_costs.h"

namespace pipewright::gui {

// One run of the automatic planner, with the project it started from (a
// plan only applies to the layout it was made for).
struct PlanAttempt {
    Project input;
    StudioCosts costs;  // what it was priced with
    std::optional<PlanResult> result;
    // Why a real run of the planned layout is likely paced by its framework's
    // host rather than its kernels (sim/host_pace.h); empty: it is not.
    std::string host_pace;
    std::string error;  // the input cannot be planned (or the planner failed)
};

// Plans in the background: on a large cluster the planner takes seconds, and
// the window must stay usable and able to give up. A plan that is cancelled or
// superseded is stopped (PlanOptions::stop) and its result never published.
class PlanRunner : public QObject {
    Q_OBJECT

  public:
    explicit PlanRunner(QObject* parent = nullptr);
    // Stops a plan still running and waits for it.
    ~PlanRunner() override;

    // Starts planning `project`, priced with `costs` (as `plan --profile`
    // and `--calibration`); a plan still running is cancelled.
    void start(const Project& project, const QString& baseDir, StudioCosts costs = {});
    // Stops the running plan, if any, and emits cancelled(); nothing of it
    // will be published.
    void cancel();

    [[nodiscard]] bool isRunning() const { return running_; }
    // The last plan that finished (finished() or failed()).
    [[nodiscard]] std::shared_ptr<const PlanAttempt> latest() const { return latest_; }

  signals:
    void started();
    // How many candidate layouts the running plan has simulated so far.
    void progress(int simulations);
    // latest() holds the plan (which may have found nothing that fits).
    void finished();
    void failed(const QString& message);
    void cancelled();

  private:
    void stopCurrent();

    quint64 generation_ = 0;
    bool running_ = false;
    std::stop_source stop_;
    std::shared_ptr<const PlanAttempt> latest_;
};

}  // namespace pipewright::gui
