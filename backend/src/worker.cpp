// One rank of a real run, as a process of its own: rendezvous, execute the
// steps, publish progress, write this rank's records for the launcher.
#include <sys/resource.h>

#include <fstream>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "pipewright/backend/executor.h"
#include "pipewright/backend/launcher.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/project_io.h"

namespace pipewright::backend {
namespace {

std::int64_t peak_rss_bytes() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

nlohmann::json step_to_json(const StepRecord& r) {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& e : r.events) {
        events.push_back({{"action", to_string(e.action)},
                          {"start_s", e.start_s},
                          {"end_s", e.end_s},
                          {"bytes", e.bytes},
                          {"peer_rank", e.peer_rank}});
    }
    nlohmann::json j{
        {"step", r.step}, {"start_s", r.start_s}, {"end_s", r.end_s}, {"events", events}};
    if (r.loss) {
        j["loss"] = *r.loss;
    }
    return j;
}

std::pair<std::string, int> split_master(const std::string& master) {
    const auto colon = master.rfind(':');
    if (colon == std::string::npos) {
        throw BackendError("--master must be HOST:PORT, got \"" + master + "\"");
    }
    return {master.substr(0, colon), std::stoi(master.substr(colon + 1))};
}

}  // namespace

int run_worker(const WorkerOptions& o, std::ostream& err) {
    const std::string who = "rank " + std::to_string(o.rank);
    try {
        auto project = load_for_run(o.settings, err);
        if (!project) {
            return 1;
        }
        torch::set_num_threads(o.threads);
        const torch::Dtype dtype = run_dtype(*project, o.settings.dtype);
        const auto [host, port] = split_master(o.master);
        const auto timeout =
            std::chrono::milliseconds(static_cast<std::int64_t>(o.settings.timeout_s * 1000));
        auto transport = make_gloo_transport(host, port, o.rank, o.world_size, timeout);
        RankExecutor executor(*project, o.rank, *transport, dtype);

        // A store client of our own for progress: the launcher polls it.
        c10d::TCPStoreOptions store_options;
        store_options.port = static_cast<std::uint16_t>(port);
        store_options.timeout = timeout;
        c10d::TCPStore store(host, store_options);

        const SyntheticTask task(*project, dtype, executor.has_last_stage());
        const int steps = o.settings.steps.value_or(project->project.training.steps);
        nlohmann::json records = nlohmann::json::array();
        for (int step = 0; step < steps; ++step) {
            const Batch batch = task.batch(step);
            const StepRecord r = executor.run_step(step, batch);
            records.push_back(step_to_json(r));
            if (r.loss) {
                const nlohmann::json progress{
                    {"step", step}, {"loss", *r.loss}, {"iteration_time_s", r.end_s - r.start_s}};
                const std::string text = progress.dump();
                store.set("progress/" + std::to_string(step),
                          std::vector<std::uint8_t>(text.begin(), text.end()));
            }
        }
        if (o.settings.save_params) {
            for (int s : executor.stages()) {
                torch::save(executor.module(s)->parameters(),
                            o.out_dir + "/params-stage-" + std::to_string(s) + ".pt");
            }
        }
        const nlohmann::json mine{{"rank", o.rank},
                                  {"threads", o.threads},
                                  {"peak_rss_bytes", peak_rss_bytes()},
                                  {"steps", records}};
        write_file_atomically(o.out_dir + "/rank-" + std::to_string(o.rank) + ".json",
                              mine.dump() + "\n");
        return 0;
    } catch (const c10::Error& e) {
        // Torch's what() carries a C++ backtrace; the first line is the reason.
        err << "pipewright worker " << who << ": " << e.what_without_backtrace() << '\n';
    } catch (const std::exception& e) {
        err << "pipewright worker " << who << ": " << e.what() << '\n';
    }
    return 1;
}

}  // namespace pipewright::backend
