#include "report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include "context_parallel_format.h"
#include "data_parallel_format.h"
#include "expert_parallel_format.h"
#include "pipewright/core/memory_headroom.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"
#include "tensor_parallel_format.h"

namespace pipewright::cli {

namespace {

// The simulator's results are finite for every input the readers accept;
// should one not be, the summary says so in words.
bool all_finite(const SimulationReport& r) {
    bool ok = std::isfinite(r.iteration_time_s) && std::isfinite(r.throughput_samples_per_s) &&
              std::isfinite(r.bubble_fraction);
    for (const auto& d : r.devices) {
        ok = ok && std::isfinite(d.busy_s) && std::isfinite(d.start_s) && std::isfinite(d.end_s) &&
             std::isfinite(d.bubble_fraction);
    }
    for (const auto& l : r.links) {
        ok = ok && std::isfinite(l.bytes) && std::isfinite(l.busy_s);
    }
    return ok;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header) {
    right_.assign(header.size(), false);
    rows_.push_back(std::move(header));
}

void TextTable::add_row(std::vector<std::string> row) {
    rows_.push_back(std::move(row));
}

void TextTable::right_align(std::size_t column) {
    if (column < right_.size()) {
        right_[column] = true;
    }
}

namespace {
// Display width: counts UTF-8 code points, not bytes ("µs").
std::size_t display_width(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) {
        if ((c & 0xC0) != 0x80) {
            ++n;
        }
    }
    return n;
}
}  // namespace

void TextTable::print(std::ostream& out, const std::string& indent) const {
    std::vector<std::size_t> widths(right_.size(), 0);
    for (const auto& row : rows_) {
        for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c) {
            widths[c] = std::max(widths[c], display_width(row[c]));
        }
    }
    for (const auto& row : rows_) {
        std::string line = indent;
        for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c) {
            const std::string pad(widths[c] - display_width(row[c]), ' ');
            line += right_[c] ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : "");
            if (c + 1 < row.size()) {
                line += "  ";
            }
        }
        while (!line.empty() && line.back() == ' ') {
            line.pop_back();
        }
        out << line << '\n';
    }
}

namespace {

// "1,893": a count with its thousands grouped.
std::string grouped_count(std::size_t n) {
    return format_grouped(static_cast<long long>(n));
}

// The class a link's name ends with: "inter-node" of
// "node0->node16 (inter-node)"; empty when it names none.
std::string link_class(const std::string& name) {
    const auto open = name.rfind(" (");
    if (open == std::string::npos || name.empty() || name.back() != ')') {
        return {};
    }
    return name.substr(open + 2, name.size() - open - 3);
}

// A figure that is not a number (the summary warns of it) sorts as the
// largest, so that the order stays one.
double sortable(double x) {
    return std::isnan(x) ? std::numeric_limits<double>::infinity() : x;
}

// Up to this many links are listed one a row, in the simulator's order.
constexpr std::size_t kLinksListedWhole = 24;
// Past it, the rows of alike links shown, busiest first, before the rest is
// summed up in one line.
constexpr std::size_t kLinkGroupsShown = 16;

// What every link carried. A cluster has thousands of links, most of them
// alike (a data-parallel ring's, a pipeline's hops in every replica): past
// kLinksListedWhole links, those of one class whose figures read the same
// share a row, which names the first of them and counts the others, and the
// rows go busiest first; the rows past kLinkGroupsShown are summed in one
// line. --json lists every link.
void print_links(std::ostream& out, const std::vector<LinkUsage>& all) {
    std::vector<const LinkUsage*> used;
    for (const auto& l : all) {
        if (l.transfers > 0) {
            used.push_back(&l);
        }
    }
    if (used.empty()) {
        return;
    }
    TextTable table({"link", "moved", "busy", "transfers"});
    table.right_align(1);
    table.right_align(2);
    table.right_align(3);
    out << '\n';
    if (used.size() <= kLinksListedWhole) {
        for (const LinkUsage* l : used) {
            table.add_row({printable_name(l->name), format_bytes(l->bytes),
                           format_duration(l->busy_s), std::to_string(l->transfers)});
        }
        table.print(out);
        return;
    }
    struct Group {
        const LinkUsage* first = nullptr;
        std::size_t links = 0;
        double busiest_s = 0;
        double bytes = 0;
        std::string moved;
        std::string busy;
    };
    std::vector<Group> groups;
    std::map<std::tuple<std::string, std::string, std::string, int>, std::size_t> index;
    for (const LinkUsage* l : used) {
        std::string moved = format_bytes(l->bytes);
        std::string busy = format_duration(l->busy_s);
        const auto [at, added] = index.try_emplace(
            std::make_tuple(link_class(l->name), moved, busy, l->transfers), groups.size());
        if (added) {
            groups.push_back({l, 0, 0, 0, std::move(moved), std::move(busy)});
        }
        Group& g = groups[at->second];
        ++g.links;
        g.busiest_s = std::max(g.busiest_s, sortable(l->busy_s));
        g.bytes += l->bytes;
    }
    // Busiest first; of two as busy, the one that moved more, then the
    // simulator's order.
    std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
        if (a.busiest_s != b.busiest_s) {
            return a.busiest_s > b.busiest_s;
        }
        return sortable(a.first->bytes) > sortable(b.first->bytes);
    });
    out << "Links       " << grouped_count(used.size())
        << " carried data, the busiest first; a row's figures are one link's, and links\n"
           "            alike (one class, the same figures) share a row; --json lists every "
           "link:\n\n";
    std::size_t rest_links = 0;
    std::size_t rest_transfers = 0;
    double rest_bytes = 0;
    double rest_busiest_s = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const Group& g = groups[i];
        if (i < kLinkGroupsShown) {
            std::string name = printable_name(g.first->name);
            if (g.links > 1) {
                name += " and " + grouped_count(g.links - 1) + " more alike";
            }
            table.add_row({name, g.moved, g.busy, std::to_string(g.first->transfers)});
            continue;
        }
        rest_links += g.links;
        rest_transfers += g.links * static_cast<std::size_t>(g.first->transfers);
        rest_bytes += g.bytes;
        rest_busiest_s = std::max(rest_busiest_s, g.busiest_s);
    }
    table.print(out);
    if (rest_links > 0) {
        out << "… and " << grouped_count(rest_links) << " more link" << (rest_links == 1 ? "" : "s")
            << ": " << format_bytes(rest_bytes) << " moved in all, in "
            << grouped_count(rest_transfers) << " transfer" << (rest_transfers == 1 ? "" : "s")
            << ", none busier than " << format_duration(rest_busiest_s) << '\n';
    }
}

}  // namespace

// The iteration when iterations run back to back with the optimizer step
// validated after the fact, as the zero-bubble paper does: no device then
// waits for the others between iterations, so each starts its next one
// where its own ended, and the period is the longest span of one device's
// work (first action to last). ZB-H2 and ZB-V reach their papers' zero
// bubble there; 1F1B's and GPipe's first device spans the whole iteration.
std::string layer_range(const Model& model, int first, int last) {
    const auto& layers = model.layers;
    const std::string& from = layers.at(static_cast<std::size_t>(first)).name;
    if (first == last) {
        return printable_name(from);
    }
    return printable_name(from + " … " + layers.at(static_cast<std::size_t>(last)).name);
}

double steady_state_s(const SimulationReport& r) {
    double span = 0;
    for (const auto& d : r.devices) {
        span = std::max(span, d.end_s - d.start_s);
    }
    return span > 0 ? span : r.iteration_time_s;
}

void print_report(std::ostream& out, const SimulationReport& r, const std::string& project_name,
                  const std::string& cost_sources, std::int64_t memory_margin_bytes) {
    out << "Project     " << printable_name(project_name) << '\n';
    out << "Schedule    " << printable_name(r.schedule) << " · " << r.microbatches << " micro-batch"
        << (r.microbatches == 1 ? "" : "es") << " of " << r.microbatch_size << " · batch "
        << r.batch_size;
    if (const int shares = batch_shares(r.data_parallel, r.context_parallel.size); shares > 1) {
        out << " (" << r.batch_size / shares << " per "
            << (shares < r.data_parallel ? "context-parallel group" : "replica") << ")";
    }
    out << '\n';
    out << "Iteration   " << format_duration(r.iteration_time_s) << " · "
        << format_rate(r.throughput_samples_per_s) << " samples/s · bubble "
        << format_percent(r.bubble_fraction) << '\n';
    if (const double steady = steady_state_s(r); steady < 0.995 * r.iteration_time_s) {
        out << "Steady      " << format_duration(steady)
            << " an iteration back to back, with the optimizer step validated after the fact "
               "(zero-bubble paper): no device waits between iterations\n";
    }
    int over = 0;
    for (const auto& d : r.devices) {
        over += d.fits ? 0 : 1;
    }
    // With --memory-margin the capacities are already less the margin, and
    // the caution about what the model does not count is the user's call.
    const std::string margin =
        memory_margin_bytes > 0
            ? format_bytes(static_cast<double>(memory_margin_bytes)) + " kept free on each GPU"
            : std::string();
    const auto tight = memory_margin_bytes > 0 ? std::nullopt : tightest_gpu(r.devices);
    out << "Memory      ";
    if (over > 0) {
        out << over << " device" << (over == 1 ? "" : "s") << " over capacity"
            << (margin.empty() ? "" : " (" + margin + ")");
    } else {
        out << "every device fits"
            << (!margin.empty() ? " with " + margin
                : tight         ? "; " + tight_memory_note(*tight)
                                : std::string());
    }
    out << '\n';
    if (!cost_sources.empty()) {
        out << "Costs       " << cost_sources << '\n';
    }
    if (const auto& tied = r.tied_embedding_sync) {
        out << "Tied        the embedding's and the head's gradients (" << format_bytes(tied->bytes)
            << ") summed "
            << (tied->same_rank
                    ? "on rank " + std::to_string(tied->head_rank)
                    : "between ranks " + std::to_string(tied->embedding_rank) + " and " +
                          std::to_string(tied->head_rank) +
                          (tied->library == CollectiveLibrary::nccl
                               ? " (NCCL " + std::string(to_string(tied->protocol)) + ")"
                               : " (Gloo)"))
            << " before the optimizer step: " << format_duration(tied->seconds) << '\n';
    }
    if (!all_finite(r)) {
        out << "Warning     some figures are not finite numbers: an input value is too extreme\n";
    }
    out << '\n';
    if (r.data_parallel > 1) {
        print_data_parallel(out, r);
        out << '\n';
    }
    if (r.tensor_parallel.size > 1) {
        print_tensor_parallel(out, r);
        out << '\n';
    }
    if (r.expert_parallel.size > 1) {
        print_expert_parallel(out, r);
        out << '\n';
    }
    if (r.context_parallel.size > 1) {
        print_context_parallel(out, r);
        out << '\n';
    }

    TextTable table({"rank", "device", "spec", "busy", "start", "end", "bubble", "peak memory",
                     "capacity", "fits"});
    for (std::size_t c : {3u, 4u, 5u, 6u, 7u, 8u}) {
        table.right_align(c);
    }
    for (const auto& d : r.devices) {
        table.add_row({std::to_string(d.rank), printable_name(d.name), printable_name(d.spec),
                       format_duration(d.busy_s), format_duration(d.start_s),
                       format_duration(d.end_s), format_percent(d.bubble_fraction),
                       format_bytes(static_cast<double>(d.peak_memory_bytes)),
                       format_bytes(static_cast<double>(d.memory_capacity_bytes)),
                       d.fits ? "yes" : "NO"});
    }
    table.print(out);
    print_links(out, r.links);
}

nlohmann::json tied_embeddings_json(const SimulationReport& r) {
    if (!r.tied_embedding_sync) {
        return nullptr;
    }
    const TiedEmbeddingSync& t = *r.tied_embedding_sync;
    nlohmann::json j = {{"embedding_stage", t.embedding_stage},
                        {"head_stage", t.head_stage},
                        {"embedding_rank", t.embedding_rank},
                        {"head_rank", t.head_rank},
                        {"gradient_bytes", t.bytes},
                        {"sum_s", t.seconds}};
    if (!t.same_rank) {
        j["library"] = t.library == CollectiveLibrary::nccl ? "nccl" : "gloo";
        j["protocol"] = to_string(t.protocol);
    }
    return j;
}

nlohmann::json report_to_json(const SimulationReport& r) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : r.devices) {
        devices.push_back({{"rank", d.rank},
                           {"name", d.name},
                           {"spec", d.spec},
                           {"busy_s", d.busy_s},
                           {"start_s", d.start_s},
                           {"end_s", d.end_s},
                           {"bubble_fraction", d.bubble_fraction},
                           {"peak_memory_bytes", d.peak_memory_bytes},
                           {"memory_capacity_bytes", d.memory_capacity_bytes},
                           {"fits", d.fits}});
    }
    nlohmann::json links = nlohmann::json::array();
    for (const auto& l : r.links) {
        if (l.transfers > 0) {
            links.push_back({{"name", l.name},
                             {"bytes", l.bytes},
                             {"busy_s", l.busy_s},
                             {"transfers", l.transfers}});
        }
    }
    return {{"schedule", r.schedule},
            {"batch_size", r.batch_size},
            {"microbatches", r.microbatches},
            {"microbatch_size", r.microbatch_size},
            {"iteration_time_s", r.iteration_time_s},
            {"steady_state_iteration_s", steady_state_s(r)},
            {"throughput_samples_per_s", r.throughput_samples_per_s},
            {"bubble_fraction", r.bubble_fraction},
            {"all_fit", r.all_fit},
            {"devices", devices},
            {"links", links},
            {"data_parallel", data_parallel_json(r)},
            {"tensor_parallel", tensor_parallel_json(r)},
            {"expert_parallel", expert_parallel_json(r)},
            {"context_parallel", context_parallel_json(r)},
            {"tied_embeddings", tied_embeddings_json(r)}};
}

void print_comparison(std::ostream& out, const std::vector<ComparisonRow>& rows,
                      const std::string& what) {
    const bool gains = has_gains(rows);
    TextTable table(
        {what, "micro-batches", "iteration", "samples/s", "bubble", "peak memory", "fits", "gain"});
    for (std::size_t c : {1u, 2u, 3u, 4u, 5u, 7u}) {
        table.right_align(c);
    }
    std::vector<std::string> notes;
    for (const auto& row : rows) {
        if (!row.report) {
            table.add_row({printable_name(row.label), "-", "-", "-", "-", "-", "-", "n/a"});
            notes.push_back(printable_name(row.label + ": " + row.reason));
            continue;
        }
        const auto& r = *row.report;
        std::int64_t peak = 0;
        for (const auto& d : r.devices) {
            peak = std::max(peak, d.peak_memory_bytes);
        }
        // No baseline ran: a gain over nothing is no figure at all.
        std::string gain = !gains         ? "—"
                           : row.baseline ? "baseline"
                                          : (row.gain_percent >= 0 ? "+" : "") +
                                                format_fixed(row.gain_percent, 1) + " %";
        table.add_row({printable_name(row.label), std::to_string(r.microbatches),
                       format_duration(r.iteration_time_s), format_rate(r.throughput_samples_per_s),
                       format_percent(r.bubble_fraction), format_bytes(static_cast<double>(peak)),
                       r.all_fit ? "yes" : "NO", gain});
        if (!row.reason.empty()) {
            notes.push_back(printable_name(row.label + ": " + row.reason));
        }
    }
    table.print(out);
    if (!notes.empty()) {
        out << '\n';
        for (const auto& n : notes) {
            out << "  " << n << '\n';
        }
    }
}

nlohmann::json comparison_to_json(const std::vector<ComparisonRow>& rows, const std::string& what) {
    const bool gains = has_gains(rows);
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : rows) {
        nlohmann::json j = {
            {what, row.label}, {"baseline", row.baseline}, {"applicable", row.report.has_value()}};
        if (row.report) {
            j.update(report_to_json(*row.report));
            j[what] = row.label;
            if (gains) {
                j["gain_percent"] = row.gain_percent;
            }
        }
        if (!row.reason.empty()) {
            j["reason"] = row.reason;
        }
        if (!row.detail.empty()) {
            j["detail"] = row.detail;
        }
        out.push_back(std::move(j));
    }
    return out;
}

}  // namespace pipewright::cli
