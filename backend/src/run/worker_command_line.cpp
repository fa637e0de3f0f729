#include "pipewright/backend/worker_command_line.h"

#include <charconv>
#include <cstdio>
#include <functional>
#include <map>

#include "pipewright/backend/backend_error.h"

namespace pipewright::backend {
namespace {

std::string exact(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", v);
    return buffer;
}

template <typename T>
T number(const std::string& flag, const std::string& text) {
    T value{};
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end) {
        throw BackendError("worker: " + flag + " needs a number, got \"" + text + "\"");
    }
    return value;
}

}  // namespace

std::vector<std::string> worker_arguments(const WorkerOptions& o) {
    const RunSettings& s = o.settings;
    std::vector<std::string> args{"worker",       s.project,
                                  "--rank",       std::to_string(o.rank),
                                  "--world",      std::to_string(o.world_size),
                                  "--out",        o.out_dir,
                                  "--threads",    std::to_string(o.threads),
                                  "--timeout",    exact(s.timeout_s),
                                  "--device",     o.device,
                                  "--local-rank", std::to_string(o.local_rank)};
    const auto add = [&](const char* flag, const std::string& value) {
        args.insert(args.end(), {flag, value});
    };
    if (!o.master.empty()) {
        add("--master", o.master);
    }
    if (!o.store_file.empty()) {
        add("--store-file", o.store_file);
    }
    if (!o.store_prefix.empty()) {
        add("--store-prefix", o.store_prefix);
    }
    if (s.steps) {
        add("--steps", std::to_string(*s.steps));
    }
    if (s.schedule) {
        add("--schedule", *s.schedule);
    }
    if (s.schedule_csv) {
        add("--schedule-csv", *s.schedule_csv);
    }
    if (s.schedule_costs) {
        add("--schedule-costs", *s.schedule_costs);
    }
    if (s.microbatches) {
        add("--microbatches", std::to_string(*s.microbatches));
    }
    if (s.batch_size) {
        add("--batch-size", std::to_string(*s.batch_size));
    }
    if (s.tensor_parallel) {
        add("--tensor-parallel", std::to_string(*s.tensor_parallel));
    }
    if (s.data_parallel) {
        add("--data-parallel", std::to_string(*s.data_parallel));
    }
    if (s.expert_parallel) {
        add("--expert-parallel", std::to_string(*s.expert_parallel));
    }
    if (!s.dtype.empty()) {
        add("--dtype", s.dtype);
    }
    if (!s.data_dir.empty()) {
        add("--data", s.data_dir);
    }
    if (s.checkpoint_every > 0) {
        add("--checkpoint-every", std::to_string(s.checkpoint_every));
    }
    if (!s.checkpoint_dir.empty()) {
        add("--checkpoint-dir", s.checkpoint_dir);
    }
    if (!s.resume_from.empty()) {
        add("--resume-from", s.resume_from);
    }
    if (s.save_params) {
        args.emplace_back("--save-params");
    }
    if (s.stop_on_nan) {
        args.emplace_back("--stop-on-nan");
    }
    if (o.bind_cores) {
        args.emplace_back("--bind-cores");
    }
    return args;
}

WorkerOptions parse_worker_arguments(const std::vector<std::string>& arguments) {
    WorkerOptions o;
    RunSettings& s = o.settings;
    using Setter = std::function<void(const std::string&, const std::string&)>;
    const std::map<std::string, Setter> options{
        {"--rank", [&](auto& f, auto& v) { o.rank = number<int>(f, v); }},
        {"--world", [&](auto& f, auto& v) { o.world_size = number<int>(f, v); }},
        {"--out", [&](auto&, auto& v) { o.out_dir = v; }},
        {"--threads", [&](auto& f, auto& v) { o.threads = number<int>(f, v); }},
        {"--timeout", [&](auto& f, auto& v) { s.timeout_s = number<double>(f, v); }},
        {"--device", [&](auto&, auto& v) { o.device = v; }},
        {"--local-rank", [&](auto& f, auto& v) { o.local_rank = number<int>(f, v); }},
        {"--master", [&](auto&, auto& v) { o.master = v; }},
        {"--store-file", [&](auto&, auto& v) { o.store_file = v; }},
        {"--store-prefix", [&](auto&, auto& v) { o.store_prefix = v; }},
        {"--steps", [&](auto& f, auto& v) { s.steps = number<int>(f, v); }},
        {"--schedule", [&](auto&, auto& v) { s.schedule = v; }},
        {"--schedule-csv", [&](auto&, auto& v) { s.schedule_csv = v; }},
        {"--schedule-costs", [&](auto&, auto& v) { s.schedule_costs = v; }},
        {"--microbatches", [&](auto& f, auto& v) { s.microbatches = number<int>(f, v); }},
        {"--batch-size", [&](auto& f, auto& v) { s.batch_size = number<int>(f, v); }},
        {"--data-parallel", [&](auto& f, auto& v) { s.data_parallel = number<int>(f, v); }},
        {"--tensor-parallel", [&](auto& f, auto& v) { s.tensor_parallel = number<int>(f, v); }},
        {"--expert-parallel", [&](auto& f, auto& v) { s.expert_parallel = number<int>(f, v); }},
        {"--dtype", [&](auto&, auto& v) { s.dtype = v; }},
        {"--data", [&](auto&, auto& v) { s.data_dir = v; }},
        {"--checkpoint-every", [&](auto& f, auto& v) { s.checkpoint_every = number<int>(f, v); }},
        {"--checkpoint-dir", [&](auto&, auto& v) { s.checkpoint_dir = v; }},
        {"--resume-from", [&](auto&, auto& v) { s.resume_from = v; }},
    };
    bool have_project = false;
    bool have_rank = false;
    bool have_world = false;
    bool have_out = false;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string& a = arguments[i];
        if (a == "--save-params") {
            s.save_params = true;
            continue;
        }
        if (a == "--stop-on-nan") {
            s.stop_on_nan = true;
            continue;
        }
        if (a == "--bind-cores") {
            o.bind_cores = true;
            continue;
        }
        if (a.rfind("--", 0) != 0) {
            if (have_project) {
                throw BackendError("worker: unexpected argument \"" + a + "\"");
            }
            s.project = a;
            have_project = true;
            continue;
        }
        const auto option = options.find(a);
        if (option == options.end()) {
            throw BackendError("worker: unknown option " + a);
        }
        if (i + 1 >= arguments.size()) {
            throw BackendError("worker: " + a + " needs a value");
        }
        option->second(a, arguments[++i]);
        have_rank |= a == "--rank";
        have_world |= a == "--world";
        have_out |= a == "--out";
    }
    if (!have_project || !have_rank || !have_world || !have_out) {
        throw BackendError(
            "worker: the project, --rank, --world and --out are required (a worker is started "
            "by pipewright run, not by hand)");
    }
    if (o.device != "cpu" && o.device != "cuda") {
        throw BackendError("worker: --device must be cpu or cuda, got \"" + o.device + "\"");
    }
    if (o.master.empty() == o.store_file.empty()) {
        throw BackendError("worker: give exactly one of --master and --store-file");
    }
    return o;
}

}  // namespace pipewright::backend
