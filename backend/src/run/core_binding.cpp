#include "run/core_binding.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "pipewright/core/quantity_format.h"

namespace pipewright::backend {

std::vector<int> allowed_cores() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    std::vector<int> cores;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) {
        return cores;
    }
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &mask)) {
            cores.push_back(c);
        }
    }
    return cores;
}

std::vector<int> cores_of_rank(const std::vector<int>& allowed, int index, int ranks, int threads) {
    if (ranks < 2 || threads < 1 || index < 0 || index >= ranks ||
        static_cast<long>(ranks) * threads > static_cast<long>(allowed.size())) {
        return {};
    }
    const auto first = allowed.begin() + static_cast<long>(index) * threads;
    return {first, first + threads};
}

std::string bind_process_to(const std::vector<int>& cores) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (const int c : cores) {
        CPU_SET(c, &mask);
    }
    // sched_setaffinity binds one thread: every thread this process already
    // has (the store's, the heartbeat's, Torch's pool), by its task id; the
    // threads started later inherit the mask of the one that starts them.
    const std::vector<pid_t> threads = thread_ids();
    if (threads.empty()) {
        return "cannot list /proc/self/task";
    }
    for (const pid_t tid : threads) {
        if (sched_setaffinity(tid, sizeof mask, &mask) != 0 && errno != ESRCH) {
            return std::string("sched_setaffinity: ") + std::strerror(errno);
        }
    }
    return "";
}

namespace {

struct CpuTimes {
    double total = 0;
    double idle = 0;
};

// The first line of /proc/stat: the jiffies every CPU spent in each state.
CpuTimes cpu_times() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    in >> cpu;
    CpuTimes t;
    double field = 0;
    for (int i = 0; i < 8 && in >> field; ++i) {
        t.total += field;
        if (i == 3 || i == 4) {  // idle, iowait
            t.idle += field;
        }
    }
    return cpu == "cpu" ? t : CpuTimes{};
}

}  // namespace

double busy_cores_now(std::chrono::milliseconds window) {
    const CpuTimes before = cpu_times();
    std::this_thread::sleep_for(window);
    const CpuTimes after = cpu_times();
    const double total = after.total - before.total;
    if (!(total > 0)) {
        return 0;
    }
    const double online = static_cast<double>(std::max(1U, std::thread::hardware_concurrency()));
    return online * (total - (after.idle - before.idle)) / total;
}

std::vector<pid_t> thread_ids() {
    std::vector<pid_t> ids;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
        ids.push_back(static_cast<pid_t>(std::stol(task.path().filename().string())));
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

std::string schedule_as_batch(const std::vector<pid_t>& threads) {
    const sched_param none{};
    for (const pid_t tid : threads) {
        if (sched_setscheduler(tid, SCHED_BATCH, &none) != 0 && errno != ESRCH) {
            return std::string("sched_setscheduler: ") + std::strerror(errno);
        }
    }
    return "";
}

CoreBindingChoice choose_core_binding(CoreBinding mode, bool gpu_ranks) {
    // GPU ranks are not bound: as if told so.
    CoreBindingChoice c{gpu_ranks ? CoreBinding::off : mode, false, 0};
    if (c.mode == CoreBinding::off) {
        return c;
    }
    if (mode == CoreBinding::automatic) {
        c.busy_cores = busy_cores_now(std::chrono::milliseconds(50));
    }
    c.bind = mode == CoreBinding::on || c.busy_cores < kBusyCores;
    return c;
}

std::string core_binding_words(const CoreBindingChoice& choice, int ranks, int threads,
                               bool machine_shared) {
    if (choice.mode == CoreBinding::off || machine_shared ||
        (!choice.bind && choice.mode != CoreBinding::automatic) ||
        cores_of_rank(allowed_cores(), 0, ranks, threads).empty()) {
        return "";
    }
    if (choice.bind) {
        return threads == 1 ? ", each rank on a core of its own"
                            : ", each rank on " + std::to_string(threads) + " cores of its own";
    }
    return ", unbound: other work keeps " + format_fixed(choice.busy_cores, 1) + " cores busy";
}

}  // namespace pipewright::backend
