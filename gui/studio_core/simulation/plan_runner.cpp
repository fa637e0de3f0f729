#include "studio_core/simulation/plan_runner.h"

#include <QMetaObject>
#include <exception>
#include <new>

#include "pipewright/core/analysis.h"
#include "pipewright/sim/host_pace.h"
#include "studio_core/simulation/background_job.h"

namespace pipewright::gui {
PlanRunner::PlanRunner(QObject* parent) : QObject(parent) {}

PlanRunner::~PlanRunner() {
    stop_.request_stop();
    // Waiting also keeps the progress calls below from reaching a deleted
    // object: they are posted only while the job runs.
    abandonBackgroundJobs(this);
}

void PlanRunner::stopCurrent() {
    stop_.request_stop();
    stop_ = std::stop_source();
    ++generation_;
    running_ = false;
}

void PlanRunner::start(const Project& project, const QString& baseDir, StudioCosts costs) {
    stopCurrent();
    running_ = true;
    const quint64 generation = generation_;
    PlanOptions options;
    options.base_dir = baseDir.toStdString();
    options.stop = stop_.get_token();
    options.costs = costs.model_options();
    options.catalog = costs.catalog_or_null();
    options.on_progress = [this, generation](const PlanStatistics& statistics) {
        QMetaObject::invokeMethod(
            this,
            [this, generation, simulations = statistics.simulations] {
                if (generation == generation_) {
                    emit progress(simulations);
                }
            },
            Qt::QueuedConnection);
    };
    emit started();
    runInBackground<std::shared_ptr<PlanAttempt>>(
        this,
        // The profile and catalog live as long as the job that prices with them.
        [project, options = std::move(options), costs = std::move(costs)] {
            auto attempt = std::make_shared<PlanAttempt>();
            attempt->input = project;
            attempt->costs = costs;
            try {
                attempt->result = plan_pipeline(project, options);
                if (attempt->result->feasible) {
                    // As the planner analysed it: its folder and catalog.
                    AnalysisOptions analysis;
                    analysis.base_dir = options.base_dir;
                    analysis.catalog = options.catalog;
                    attempt->host_pace =
                        host_pace_warning(attempt->result->project, analysis, options.costs)
                            .value_or("");
                }
            } catch (const PlanCancelled&) {
                // Dropped below: a cancelled plan has a newer generation.
            } catch (const std::bad_alloc&) {
                attempt->error = "out of memory";
            } catch (const std::exception& e) {
                attempt->error = e.what();
            }
            return attempt;
        },
        [this, generation](std::shared_ptr<PlanAttempt> attempt) {
            if (generation != generation_) {
                return;
            }
            running_ = false;
            latest_ = std::move(attempt);
            if (latest_->result) {
                emit finished();
            } else {
                emit failed(QString::fromStdString(latest_->error));
            }
        });
}

void PlanRunner::cancel() {
    if (!running_) {
        return;
    }
    stopCurrent();
    emit cancelled();
}

}  // namespace pipewright::gui
