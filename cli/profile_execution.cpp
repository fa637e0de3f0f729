#include <unistd.h>

#include <filesystem>
#include <tuple>

#include "backend_commands.h"
#include "option_checks.h"
#include "pipewright/backend/profiler.h"
#include "pipewright/core/profile.h"
#include "pipewright/core/project_io.h"
#include "report_format.h"

// `profile` carried out by the backend program (LibTorch).

namespace pipewright::cli {
namespace {

std::string ms(double v) {
    return format_duration(v * 1e-3);
}

// The measured collectives beside what the simulator's ring formula makes of
// the fitted link with two members.
void print_collectives(std::ostream& out, const Profile& p) {
    if (!p.all_reduce && !p.all_gather) {
        return;
    }
    out << "\nCollectives in a group of two ranks (" << p.machine.transport
        << ", 127.0.0.1), as ring links for the simulator:\n";
    TextTable table({"collective", "buffer", "measured", "ring formula"});
    for (const auto& [name, measured, steps] :
         {std::tuple{"all-reduce", &p.all_reduce, 2.0}, {"all-gather", &p.all_gather, 1.0}}) {
        if (!*measured) {
            continue;
        }
        const LinkSpec& link = (*measured)->link;
        out << "  " << name << ": latency " << format_duration(link.latency_us * 1e-6)
            << " a step, " << format_bytes(link.bandwidth_GBps * 1e9) << "/s\n";
        for (const auto& s : (*measured)->samples) {
            // Two members: each of `steps` phases is one latency and half the buffer.
            const double formula = steps * link.transfer_seconds(s.bytes / 2);
            table.add_row({name, format_bytes(s.bytes), format_duration(s.seconds),
                           format_duration(formula)});
        }
    }
    for (std::size_t c = 1; c <= 3; ++c) {
        table.right_align(c);
    }
    table.print(out, "  ");
}

// Every size measured: the whole model's forward + backward per micro-batch
// and per sample, which shows how far from proportional the times are.
void print_sizes(std::ostream& out, const Profile& p) {
    const std::vector<int> sizes = p.measured_sizes();
    if (sizes.size() < 2) {
        return;
    }
    out << "\nForward + backward of all layers at each micro-batch size measured:\n";
    TextTable table({"micro-batch", "time", "per sample"});
    for (const int size : sizes) {
        double ms_total = 0;
        for (const auto& l : p.layers) {
            const LayerTimesAtSize t = layer_times_at(p, l, size);
            ms_total += t.forward_ms + t.backward_input_ms + t.backward_weight_ms;
        }
        table.add_row({std::to_string(size), ms(ms_total), ms(ms_total / size)});
    }
    for (std::size_t c = 0; c <= 2; ++c) {
        table.right_align(c);
    }
    table.print(out, "  ");
}

void print_profile(std::ostream& out, const Profile& p, const std::string& project,
                   const std::string& path) {
    out << project << ": measured on " << (p.machine.host.empty() ? "this machine" : p.machine.host)
        << " (" << p.device_name << "), micro-batch size " << p.microbatch_size << ", median of "
        << p.machine.repeats
        << (p.machine.concurrent_ranks > 1
                ? ", while " + std::to_string(p.machine.concurrent_ranks) +
                      " ranks computed at once"
                : std::string())
        << "\n\n";
    TextTable table({"layer", "forward", "input grad", "weight grad", "activations"});
    LayerProfile total;
    std::int64_t total_bytes = 0;
    for (const auto& l : p.layers) {
        table.add_row(
            {l.name, ms(l.forward_ms), ms(l.backward_input_ms), ms(l.backward_weight_ms),
             l.activation_bytes ? format_bytes(static_cast<double>(*l.activation_bytes)) : "-"});
        total.forward_ms += l.forward_ms;
        total.backward_input_ms += l.backward_input_ms;
        total.backward_weight_ms += l.backward_weight_ms;
        total_bytes += l.activation_bytes.value_or(0);
    }
    table.add_row({"total", ms(total.forward_ms), ms(total.backward_input_ms),
                   ms(total.backward_weight_ms), format_bytes(static_cast<double>(total_bytes))});
    for (std::size_t c = 1; c <= 4; ++c) {
        table.right_align(c);
    }
    table.print(out, "  ");
    print_sizes(out, p);
    if (p.transfer) {
        out << "\nTransfer between two ranks (" << p.machine.transport << ", 127.0.0.1): latency "
            << format_duration(p.transfer->latency_us * 1e-6) << " + bytes / "
            << format_bytes(p.transfer->bandwidth_GBps * 1e9) << "/s\n";
        TextTable samples({"message", "one way", "fit"});
        for (const auto& s : p.transfer_samples) {
            samples.add_row({format_bytes(s.bytes), format_duration(s.seconds),
                             format_duration(p.transfer->transfer_seconds(s.bytes))});
        }
        samples.right_align(0);
        samples.right_align(1);
        samples.right_align(2);
        samples.print(out, "  ");
        if (p.ready_receive_us) {
            out << "  a receive whose message has already come in: "
                << format_duration(*p.ready_receive_us * 1e-6)
                << " (posting the next one and taking it, as a run does)\n";
        }
    }
    print_collectives(out, p);
    out << "\nWrote " << path << "; use it with `pipewright simulate " << project << " --profile "
        << path << "`\n";
}

}  // namespace

int run_profile(const ProfileArgs& a, std::ostream& out, std::ostream& err) {
    std::vector<NamedFile> inputs;
    inputs.push_back(NamedFile{"project", a.project});
    std::vector<NamedFile> outputs;
    outputs.push_back(NamedFile{"--out", a.out});
    if (!check_outputs_spare_inputs(inputs, outputs, err)) {
        return kUsage;
    }
    if (!check_output_file("profile", a.out, err)) {
        return kInvalidInput;
    }
    backend::ProfileOptions o;
    o.project = a.project;
    o.microbatches = a.microbatches;
    o.batch_size = a.batch_size;
    o.device = a.device;
    o.threads = a.threads;
    o.repeats = a.repeats;
    o.warmup = a.warmup;
    o.sizes = a.sizes;
    o.concurrent_ranks = a.concurrent_ranks;
    o.json_progress = a.progress == "json";
    const auto outcome = backend::profile_project(o, err);
    if (outcome.exit_code != 0 || !outcome.profile) {
        return kInvalidInput;
    }
    const std::string text = profile_to_json(*outcome.profile).dump(2) + "\n";
    try {
        write_file_atomically(a.out, text);
    } catch (const std::exception& e) {
        err << "pipewright: cannot write the profile: " << e.what() << '\n';
        return kInvalidInput;
    }
    if (a.json) {
        out << text;
    } else {
        print_profile(out, *outcome.profile, a.project, a.out);
    }
    return kOk;
}
}  // namespace pipewright::cli
