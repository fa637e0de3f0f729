#include "studio_core/simulation/simulation_runner.h"

#include <new>

#include "pipewright/core/core_sharing.h"
#include "pipewright/sim/attention_note.h"
#include "pipewright/sim/auto_schedule.h"
#include "pipewright/sim/event_simulator.h"
#include "pipewright/sim/host_pace.h"
#include "studio_core/simulation/background_job.h"

namespace pipewright::gui {

SimulationResult simulate_now(const Project& project, const std::string& base_dir,
                              StudioCosts studio_costs, const Diagnostics& earlier) {
    SimulationResult result;
    result.project = project;
    result.profile = studio_costs.profile;
    result.catalog = studio_costs.catalog;
    const CostModelOptions costs = studio_costs.model_options();
    AnalysisOptions options;
    options.base_dir = base_dir;
    options.catalog = studio_costs.catalog_or_null();
    try {
        Diagnostics seen = earlier;
        auto analyzed = analyze_project(project, options, seen);
        const auto& items = seen.items();
        for (std::size_t i = earlier.size(); i < items.size(); ++i) {
            result.diagnostics.add(items[i].path, items[i].message);
        }
        if (!analyzed) {
            return result;
        }
        // The batch stands in for a refused one: a timeline of it would show
        // an iteration the file does not describe.
        if (earlier.mentions("training.batch_size") || earlier.mentions("training.microbatches") ||
            earlier.mentions("training.microbatch_size")) {
            return result;
        }
        result.stages = analyzed->stages;
        result.core_sharing = calibrated_core_sharing_warning(*analyzed).value_or("");
        // zb-auto as built for these costs: what is simulated and exported.
        // The simulation runs these very lists, fixed as a CSV's are, rather
        // than building them a second time (the build costs more than the
        // simulation).
        result.schedule = schedule_for_costs(*analyzed, costs);
        if (builds_for_costs(*analyzed)) {
            analyzed->schedule = result.schedule;
            analyzed->schedule_from_csv = true;
        }
        result.report = simulate_project(*analyzed, costs);
        result.layout = std::make_shared<const TimelineLayout>(result.report->timeline);
        result.kernels = stage_kernels(*analyzed, costs);
        result.host_pace = host_pace_warning(*analyzed, result.kernels).value_or("");
        result.attention = attention_kernel_note(*analyzed, costs);
    } catch (const InputError& e) {
        result.diagnostics.append(e.diagnostics());
    } catch (const std::bad_alloc&) {
        result.error =
            "out of memory: this case needs more memory than is available; try fewer "
            "micro-batches or stages";
    } catch (const std::exception& e) {
        result.error = e.what();
    }
    return result;
}

SimulationRunner::SimulationRunner(QObject* parent) : QObject(parent) {
    timer_.setSingleShot(true);
    timer_.setInterval(150);
    connect(&timer_, &QTimer::timeout, this, &SimulationRunner::launch);
}

SimulationRunner::~SimulationRunner() {
    abandonBackgroundJobs(this);
}

bool SimulationRunner::busy() const {
    return timer_.isActive() || (job_ && job_->isRunning());
}

void SimulationRunner::request(const Project& project, const QString& baseDir,
                               const Diagnostics& earlier) {
    pending_ = project;
    base_dir_ = baseDir;
    earlier_ = earlier;
    ++generation_;
    timer_.start();
}

void SimulationRunner::runSynchronously(const Project& project, const QString& baseDir,
                                        const Diagnostics& earlier) {
    timer_.stop();
    ++generation_;
    emit started();
    publish(simulate_now(project, baseDir.toStdString(), costs_, earlier));
}

void SimulationRunner::launch() {
    const quint64 generation = generation_;
    // A superseded run finishes on its own; only the newest is published.
    job_ = runInBackground<SimulationResult>(
        this,
        [project = pending_, dir = base_dir_.toStdString(), costs = costs_, earlier = earlier_] {
            return simulate_now(project, dir, costs, earlier);
        },
        [this, generation](SimulationResult result) {
            if (generation == generation_) {
                publish(std::move(result));
            }
        });
    emit started();
}

void SimulationRunner::publish(SimulationResult result) {
    latest_ = std::make_shared<const SimulationResult>(std::move(result));
    if (latest_->ok()) {
        emit finished();
        return;
    }
    QString message;
    if (!latest_->error.empty()) {
        message = tr("Simulation failed: %1").arg(QString::fromStdString(latest_->error));
    } else {
        const auto n = latest_->diagnostics.size();
        // None of its own: it waits for the file's problems (simulate_now's
        // `earlier`) to be fixed.
        message = n == 0
                      ? tr("Not simulated: fix the problems of the file listed under Problems")
                      : tr("The simulation stopped on %n problem(s)", nullptr, static_cast<int>(n));
        if (n > 0) {
            const auto& first = latest_->diagnostics.items().front();
            message +=
                QStringLiteral(": %1: %2")
                    .arg(QString::fromStdString(first.path), QString::fromStdString(first.message));
        }
    }
    emit failed(message);
}

}  // namespace pipewright::gui
