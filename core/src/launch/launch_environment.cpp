#include "pipewright/core/launch_environment.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace pipewright {
namespace {

std::string quoted(const std::string& text) {
    return "\"" + text + "\"";
}

// A whole number from `low` up, or the refusal naming the variable.
int whole(const std::string& variable, const std::string& text, int low) {
    int value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end || value < low) {
        throw LaunchError(variable + " must be a whole number from " + std::to_string(low) +
                          " up, got " + quoted(text));
    }
    return value;
}

std::string required(const Environment& env, const std::string& variable,
                     const std::string& launcher) {
    const auto value = env(variable);
    if (!value || value->empty()) {
        throw LaunchError(variable + " is not set: " + launcher +
                          " gives it to every process it starts (run under " + launcher +
                          ", or choose another --launcher)");
    }
    return *value;
}

int port_of(const std::string& variable, const std::string& text) {
    const int port = whole(variable, text, 1);
    if (port > 65535) {
        throw LaunchError(variable + " must be a port from 1 to 65535, got " + quoted(text));
    }
    return port;
}

void check_rank(const EnvironmentLaunch& l, const std::string& rank_variable) {
    if (l.rank >= l.world_size) {
        throw LaunchError(rank_variable + " is " + std::to_string(l.rank) + ", but " +
                          l.world_variable + " is " + std::to_string(l.world_size) +
                          ": a rank must be below the world size");
    }
}

EnvironmentLaunch torchrun(const Environment& env) {
    const std::string who = "torchrun";
    EnvironmentLaunch l;
    l.launcher = who;
    l.world_variable = "WORLD_SIZE";
    l.rank = whole("RANK", required(env, "RANK", who), 0);
    l.world_size = whole("WORLD_SIZE", required(env, "WORLD_SIZE", who), 1);
    check_rank(l, "RANK");
    if (const auto local = env("LOCAL_RANK")) {
        l.local_rank = whole("LOCAL_RANK", *local, 0);
    }
    l.local_world_size = l.local_rank + 1;
    if (const auto local_world = env("LOCAL_WORLD_SIZE")) {
        l.local_world_size = whole("LOCAL_WORLD_SIZE", *local_world, 1);
        if (l.local_rank >= l.local_world_size) {
            throw LaunchError("LOCAL_RANK is " + std::to_string(l.local_rank) +
                              ", but LOCAL_WORLD_SIZE is " + std::to_string(l.local_world_size) +
                              ": a local rank must be below the local world size");
        }
    }
    l.master_host = required(env, "MASTER_ADDR", who);
    l.master_port = port_of("MASTER_PORT", required(env, "MASTER_PORT", who));
    if (env("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True") {
        // As torch.distributed does: this attempt's keys under a prefix, so
        // that a restarted attempt does not read the failed one's.
        const std::string attempt = env("TORCHELASTIC_RESTART_COUNT").value_or("0");
        (void)whole("TORCHELASTIC_RESTART_COUNT", attempt, 0);
        l.agent_store = true;
        l.store_prefix = "pipewright/attempt_" + attempt;
    }
    return l;
}

EnvironmentLaunch slurm(const Environment& env) {
    const std::string who = "Slurm";
    EnvironmentLaunch l;
    l.launcher = "slurm";
    l.world_variable = "SLURM_NTASKS";
    l.rank = whole("SLURM_PROCID", required(env, "SLURM_PROCID", who), 0);
    l.world_size = whole("SLURM_NTASKS", required(env, "SLURM_NTASKS", who), 1);
    check_rank(l, "SLURM_PROCID");
    l.local_rank = whole("SLURM_LOCALID", env("SLURM_LOCALID").value_or("0"), 0);
    // Slurm says the tasks of this node in SLURM_NTASKS_PER_NODE only when
    // they were asked for so.
    l.local_world_size = l.local_rank + 1;
    if (const auto per_node = env("SLURM_NTASKS_PER_NODE")) {
        l.local_world_size =
            std::max(l.local_world_size, whole("SLURM_NTASKS_PER_NODE", *per_node, 1));
    }
    // The node index follows from the tasks' placement and is not needed;
    // a malformed one still says that the environment is not Slurm's.
    if (const auto node = env("SLURM_NODEID")) {
        (void)whole("SLURM_NODEID", *node, 0);
    }
    if (const auto addr = env("MASTER_ADDR"); addr && !addr->empty()) {
        l.master_host = *addr;
    } else {
        const std::string variable = env("SLURM_JOB_NODELIST") ? "SLURM_JOB_NODELIST"
                                     : env("SLURM_NODELIST")   ? "SLURM_NODELIST"
                                                               : "SLURM_JOB_NODELIST";
        l.master_host = expand_slurm_nodelist(required(env, variable, who), variable).front();
    }
    const auto port = env("MASTER_PORT");
    l.master_port = port ? port_of("MASTER_PORT", *port) : kDefaultSlurmMasterPort;
    return l;
}

bool set(const Environment& env, const std::string& variable) {
    const auto value = env(variable);
    return value && !value->empty();
}

// Numbers of a range "01-04" (keeping their width) or one number "7".
void expand_range(const std::string& prefix, const std::string& range, const std::string& variable,
                  const std::string& list, std::vector<std::string>& hosts) {
    const auto bad = [&](const std::string& why) {
        return LaunchError(variable + " is not a Slurm node list (" + why + "): " + quoted(list));
    };
    const auto dash = range.find('-');
    const std::string first = range.substr(0, dash);
    const std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
    const auto digits = [](const std::string& s) {
        if (s.empty() || s.size() > 9) {
            return false;
        }
        for (const char c : s) {
            if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
                return false;
            }
        }
        return true;
    };
    if (!digits(first) || !digits(last)) {
        throw bad("\"" + range + "\" is not a number or a range of numbers");
    }
    const long low = std::strtol(first.c_str(), nullptr, 10);
    const long high = std::strtol(last.c_str(), nullptr, 10);
    if (high < low) {
        throw bad("the range \"" + range + "\" runs backwards");
    }
    for (long n = low; n <= high; ++n) {
        std::string number = std::to_string(n);
        if (number.size() < first.size()) {
            number.insert(0, first.size() - number.size(), '0');
        }
        hosts.push_back(prefix + number);
    }
}

}  // namespace

Environment process_environment() {
    return [](const std::string& variable) -> std::optional<std::string> {
        const char* value = std::getenv(variable.c_str());
        if (value == nullptr) {
            return std::nullopt;
        }
        return std::string(value);
    };
}

std::optional<EnvironmentLaunch> launch_from_environment(const std::string& choice,
                                                         const Environment& env) {
    if (choice == "own") {
        return std::nullopt;
    }
    if (choice == "torchrun") {
        return torchrun(env);
    }
    if (choice == "slurm") {
        return slurm(env);
    }
    if (choice != "auto") {
        throw LaunchError("--launcher must be auto, own, torchrun or slurm, got " + quoted(choice));
    }
    // Kubeflow gives every pod RANK and WORLD_SIZE of the pods together with
    // PET_* for a torchrun inside it; torchrun's own processes always have
    // LOCAL_RANK.
    const bool agent_node = set(env, "PET_NPROC_PER_NODE") && !set(env, "LOCAL_RANK");
    if (set(env, "RANK") && set(env, "WORLD_SIZE") && !agent_node) {
        return torchrun(env);
    }
    // One task (an `srun --pty` shell) starts the whole run itself, and a
    // batch script's own shell (no step) is not one of the job's tasks: the
    // tasks are what srun starts.
    if (set(env, "SLURM_PROCID") && set(env, "SLURM_NTASKS") && set(env, "SLURM_STEP_ID") &&
        env("SLURM_NTASKS") != "1") {
        return slurm(env);
    }
    return std::nullopt;
}

std::string describe(const EnvironmentLaunch& l) {
    const bool v6 = l.master_host.find(':') != std::string::npos;
    return "launcher: " + l.launcher + ", rank " + std::to_string(l.rank) + " of " +
           std::to_string(l.world_size) + ", master " + (v6 ? "[" : "") + l.master_host +
           (v6 ? "]" : "") + ":" + std::to_string(l.master_port) +
           (l.agent_store ? " (torchrun's store)" : "");
}

std::vector<std::string> expand_slurm_nodelist(const std::string& list,
                                               const std::string& variable) {
    const auto bad = [&](const std::string& why) {
        return LaunchError(variable + " is not a Slurm node list (" + why + "): " + quoted(list));
    };
    std::vector<std::string> hosts;
    std::size_t i = 0;
    while (i < list.size()) {
        // One entry: a prefix, then an optional [ranges] and more of the name.
        std::string prefix;
        while (i < list.size() && list[i] != ',' && list[i] != '[') {
            prefix += list[i++];
        }
        if (i < list.size() && list[i] == '[') {
            const auto close = list.find(']', i);
            if (close == std::string::npos) {
                throw bad("a '[' without its ']'");
            }
            const std::string inside = list.substr(i + 1, close - i - 1);
            i = close + 1;
            std::string suffix;
            while (i < list.size() && list[i] != ',') {
                if (list[i] == '[') {
                    throw bad("more than one bracket in one name");
                }
                suffix += list[i++];
            }
            if (prefix.empty() || inside.empty()) {
                throw bad("a bracket needs a name before it and numbers inside");
            }
            std::vector<std::string> names;
            std::size_t start = 0;
            while (start <= inside.size()) {
                const auto comma = inside.find(',', start);
                const std::string range =
                    inside.substr(start, comma == std::string::npos ? comma : comma - start);
                expand_range(prefix, range, variable, list, names);
                if (comma == std::string::npos) {
                    break;
                }
                start = comma + 1;
            }
            for (auto& n : names) {
                hosts.push_back(n + suffix);
            }
        } else if (prefix.empty()) {
            throw bad("an empty name");
        } else {
            hosts.push_back(prefix);
        }
        if (i < list.size()) {
            ++i;  // the comma
            if (i == list.size()) {
                throw bad("an empty name");
            }
        }
    }
    if (hosts.empty()) {
        throw bad("no host");
    }
    return hosts;
}

}  // namespace pipewright
