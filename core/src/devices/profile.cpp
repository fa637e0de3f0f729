#include "pipewright/core/profile.h"

#include <algorithm>
#include <limits>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/input_limits.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/json_reader.h"
#include "pipewright/core/project_io.h"

namespace pipewright {

const LayerProfile* Profile::find(const std::string& layer) const {
    for (const auto& l : layers) {
        if (l.name == layer) {
            return &l;
        }
    }
    return nullptr;
}

LayerTimesAtSize LayerProfile::at_profile_size(int profile_microbatch_size) const {
    return {profile_microbatch_size, forward_ms, backward_input_ms, backward_weight_ms,
            backward_ms};
}

std::vector<int> Profile::measured_sizes() const {
    std::vector<int> sizes{microbatch_size};
    for (const auto& l : layers) {
        for (const auto& t : l.other_sizes) {
            sizes.push_back(t.microbatch_size);
        }
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

namespace {

// One time at `x` samples from the points (a.size, ta) and (b.size, tb).
double along_line(double x, double xa, double ta, double xb, double tb) {
    return ta + (tb - ta) * (x - xa) / (xb - xa);
}

// Outside the measured sizes: along the line through the nearest two,
// between proportional scaling of the nearest and the nearest itself (a
// smaller batch is no slower; a larger one at most proportionally slower).
double beyond(double x, double near_x, double near_t, double next_x, double next_t) {
    const double proportional = near_t * x / near_x;
    const double line = along_line(x, near_x, near_t, next_x, next_t);
    return x < near_x ? std::clamp(line, proportional, near_t)
                      : std::clamp(line, near_t, proportional);
}

}  // namespace

LayerTimesAtSize layer_times_at(const Profile& profile, const LayerProfile& layer,
                                double microbatch_size) {
    std::vector<LayerTimesAtSize> points = layer.other_sizes;
    points.push_back(layer.at_profile_size(profile.microbatch_size));
    std::sort(points.begin(), points.end(),
              [](const auto& a, const auto& b) { return a.microbatch_size < b.microbatch_size; });
    const double x = microbatch_size;
    // The two points the time is read from: the pair around x, or the two
    // nearest on x's side.
    std::size_t hi = 0;
    while (hi + 1 < points.size() && points[hi].microbatch_size < x) {
        ++hi;
    }
    const LayerTimesAtSize& near = points[hi];
    const bool single = points.size() == 1;
    const bool inside =
        !single && x <= points.back().microbatch_size && x >= points.front().microbatch_size;
    const LayerTimesAtSize& other =
        single ? near
               : (inside ? points[hi == 0 ? 1 : hi - 1] : points[hi == 0 ? 1 : points.size() - 2]);
    auto time = [&](auto part) {
        const double xa = near.microbatch_size;
        if (single || x == xa) {
            return part(near) * x / xa;
        }
        const double xb = other.microbatch_size;
        return inside ? std::max(0.0, along_line(x, xa, part(near), xb, part(other)))
                      : beyond(x, xa, part(near), xb, part(other));
    };
    LayerTimesAtSize out;
    out.microbatch_size = static_cast<int>(microbatch_size);
    out.forward_ms = time([](const LayerTimesAtSize& t) { return t.forward_ms; });
    out.backward_input_ms = time([](const LayerTimesAtSize& t) { return t.backward_input_ms; });
    out.backward_weight_ms = time([](const LayerTimesAtSize& t) { return t.backward_weight_ms; });
    // The whole backward only where every size measured it.
    if (std::all_of(points.begin(), points.end(),
                    [](const auto& p) { return p.backward_ms.has_value(); })) {
        out.backward_ms = time([](const LayerTimesAtSize& t) { return *t.backward_ms; });
    }
    return out;
}

std::vector<int> default_profile_sizes(int microbatch_size, int largest) {
    std::vector<int> sizes{1};
    for (int s = 4; s < microbatch_size; s *= 4) {
        sizes.push_back(s);
    }
    if (microbatch_size > 1) {
        sizes.push_back(microbatch_size);
    }
    for (long long s = 4LL * microbatch_size; s < largest; s *= 4) {
        sizes.push_back(static_cast<int>(s));
    }
    if (largest > sizes.back()) {
        sizes.push_back(largest);
    }
    return sizes;
}

namespace {

// A layer's pass times as the file writes them, at its own size and at others.
void write_times(nlohmann::json& j, const LayerTimesAtSize& t) {
    j["forward_ms"] = t.forward_ms;
    j["backward_input_ms"] = t.backward_input_ms;
    j["backward_weight_ms"] = t.backward_weight_ms;
    if (t.backward_ms) {
        j["backward_ms"] = *t.backward_ms;
    }
}

}  // namespace

nlohmann::json profile_to_json(const Profile& p) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : p.layers) {
        nlohmann::json lj = {{"name", l.name}};
        write_times(lj, l.at_profile_size(p.microbatch_size));
        if (l.optimizer_ms) {
            lj["optimizer_ms"] = *l.optimizer_ms;
        }
        if (l.activation_bytes) {
            lj["activation_bytes"] = *l.activation_bytes;
        }
        if (l.parameters) {
            lj["parameters"] = *l.parameters;
        }
        if (l.output_shape) {
            lj["output_shape"] = *l.output_shape;
        }
        if (!l.other_sizes.empty()) {
            nlohmann::json sizes = nlohmann::json::array();
            for (const auto& t : l.other_sizes) {
                nlohmann::json tj = {{"microbatch_size", t.microbatch_size}};
                write_times(tj, t);
                sizes.push_back(std::move(tj));
            }
            lj["other_sizes"] = std::move(sizes);
        }
        layers.push_back(std::move(lj));
    }
    nlohmann::json j = {{"format", Profile::kFormat},           {"version", Profile::kVersion},
                        {"device_kind", p.device_kind},         {"device_name", p.device_name},
                        {"microbatch_size", p.microbatch_size}, {"layers", layers}};
    if (p.transfer) {
        j["transfer"] = {{"bandwidth_GBps", p.transfer->bandwidth_GBps},
                         {"latency_us", p.transfer->latency_us}};
        if (!p.transfer_samples.empty()) {
            nlohmann::json samples = nlohmann::json::array();
            for (const auto& t : p.transfer_samples) {
                samples.push_back({{"bytes", t.bytes}, {"seconds", t.seconds}});
            }
            j["transfer"]["samples"] = std::move(samples);
        }
        if (p.ready_receive_us) {
            j["transfer"]["ready_receive_us"] = *p.ready_receive_us;
        }
    }
    for (const auto& [key, collective] :
         {std::pair{"all_reduce", &p.all_reduce}, {"all_gather", &p.all_gather}}) {
        if (*collective) {
            nlohmann::json samples = nlohmann::json::array();
            for (const auto& t : (*collective)->samples) {
                samples.push_back({{"bytes", t.bytes}, {"seconds", t.seconds}});
            }
            j["collectives"][key] = {{"bandwidth_GBps", (*collective)->link.bandwidth_GBps},
                                     {"latency_us", (*collective)->link.latency_us},
                                     {"samples", std::move(samples)}};
        }
    }
    // Only what is known: an older or hand-written profile has none of it.
    const ProfileMachine& m = p.machine;
    nlohmann::json machine = nlohmann::json::object();
    if (!m.host.empty()) {
        machine["host"] = m.host;
    }
    for (const auto& [key, value] : {std::pair{"cores", m.cores},
                                     {"threads", m.threads},
                                     {"repeats", m.repeats},
                                     {"concurrent_ranks", m.concurrent_ranks}}) {
        if (value > 0) {
            machine[key] = value;
        }
    }
    if (!m.transport.empty()) {
        machine["transport"] = m.transport;
    }
    if (!m.torch_version.empty()) {
        machine["torch_version"] = m.torch_version;
    }
    if (!machine.empty()) {
        j["machine"] = std::move(machine);
    }
    return j;
}

namespace {

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;
constexpr NumberRange kMilliseconds{0, limits::kMaxMilliseconds};

// The pass times write_times writes (the size is read by the caller).
LayerTimesAtSize read_times(const JsonObject& r) {
    LayerTimesAtSize t;
    t.forward_ms = r.number("forward_ms", kRequired, kMilliseconds).value_or(0);
    t.backward_input_ms = r.number("backward_input_ms", kRequired, kMilliseconds).value_or(0);
    t.backward_weight_ms = r.number("backward_weight_ms", kRequired, kMilliseconds).value_or(0);
    t.backward_ms = r.number("backward_ms", kOptional, kMilliseconds);
    return t;
}

LayerTimesAtSize read_times_at_size(const JsonObject& r) {
    r.reject_unknown({"microbatch_size", "forward_ms", "backward_input_ms", "backward_weight_ms",
                      "backward_ms"});
    LayerTimesAtSize t = read_times(r);
    t.microbatch_size = static_cast<int>(
        r.integer("microbatch_size", kRequired, 1, std::numeric_limits<int>::max()).value_or(1));
    return t;
}

// Ascending and distinct from each other and from the profile's own size.
void read_other_sizes(const JsonObject& r, int profile_size, LayerProfile& l) {
    const auto sizes = r.array("other_sizes", kOptional);
    if (!sizes) {
        return;
    }
    for (std::size_t i = 0; i < sizes->size() && !sizes->full(); ++i) {
        const JsonObject t(sizes->element(i));
        if (!t.ok()) {
            continue;
        }
        LayerTimesAtSize times = read_times_at_size(t);
        if (times.microbatch_size == profile_size ||
            (!l.other_sizes.empty() &&
             times.microbatch_size <= l.other_sizes.back().microbatch_size)) {
            t.error("microbatch_size",
                    "the sizes must ascend and differ from the profile's microbatch_size (" +
                        std::to_string(profile_size) + ")");
            continue;
        }
        l.other_sizes.push_back(times);
    }
}

LayerProfile read_layer(const JsonObject& r, int profile_size) {
    LayerProfile l;
    r.reject_unknown({"name", "forward_ms", "backward_input_ms", "backward_weight_ms",
                      "backward_ms", "optimizer_ms", "activation_bytes", "parameters",
                      "output_shape", "other_sizes"});
    l.name = r.string("name", kRequired).value_or("");
    const LayerTimesAtSize times = read_times(r);
    l.forward_ms = times.forward_ms;
    l.backward_input_ms = times.backward_input_ms;
    l.backward_weight_ms = times.backward_weight_ms;
    l.backward_ms = times.backward_ms;
    l.optimizer_ms = r.number("optimizer_ms", kOptional, kMilliseconds);
    // The same bound as in a project: a larger count would wrap once
    // multiplied by the micro-batches in flight.
    l.activation_bytes = r.integer("activation_bytes", kOptional, 0, limits::kMaxActivationBytes);
    l.parameters = r.integer("parameters", kOptional, 0, limits::kMaxActivationBytes);
    if (const auto shape = r.array("output_shape", kOptional)) {
        std::vector<std::int64_t> dims;
        for (std::size_t i = 0; i < shape->size() && !shape->full(); ++i) {
            if (const auto d = shape->element(i).integer(1, limits::kMaxActivationBytes)) {
                dims.push_back(*d);
            }
        }
        if (dims.size() == shape->size()) {
            l.output_shape = std::move(dims);
        }
    }
    read_other_sizes(r, profile_size, l);
    return l;
}

// A link with the sizes it was fitted to: the transfer, or a collective.
// `ready_receive_us`: where the fit may carry it (the transfer's), else
// nullptr, and the key is refused as unknown.
std::optional<LinkSpec> read_fit(const JsonObject& t, std::vector<TransferSample>& samples_out,
                                 std::optional<double>* ready_receive_us = nullptr) {
    if (ready_receive_us != nullptr) {
        t.reject_unknown({"bandwidth_GBps", "latency_us", "samples", "ready_receive_us"});
        *ready_receive_us = t.number("ready_receive_us", kOptional, {0, limits::kMaxLatencyUs});
    } else {
        t.reject_unknown({"bandwidth_GBps", "latency_us", "samples"});
    }
    const auto bandwidth = t.number("bandwidth_GBps", kRequired,
                                    {limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps});
    const auto latency = t.number("latency_us", kRequired, {0, limits::kMaxLatencyUs});
    if (auto samples = t.array("samples", kOptional)) {
        for (std::size_t i = 0; i < samples->size(); ++i) {
            const JsonObject s(samples->element(i));
            if (!s.ok()) {
                continue;
            }
            s.reject_unknown({"bytes", "seconds"});
            const auto bytes = s.number("bytes", kRequired);
            const auto seconds = s.number("seconds", kRequired);
            if (bytes && seconds) {
                samples_out.push_back({*bytes, *seconds});
            }
        }
    }
    if (bandwidth && latency) {
        return LinkSpec{*bandwidth, *latency};
    }
    return std::nullopt;
}

void read_collectives(const JsonObject& c, Profile& p) {
    c.reject_unknown({"all_reduce", "all_gather"});
    for (const auto& [key, target] :
         {std::pair{"all_reduce", &p.all_reduce}, {"all_gather", &p.all_gather}}) {
        if (auto fit = c.object(key, kOptional)) {
            CollectiveProfile measured;
            if (auto link = read_fit(*fit, measured.samples)) {
                measured.link = *link;
                *target = std::move(measured);
            }
        }
    }
}

ProfileMachine read_machine(const JsonObject& m) {
    ProfileMachine out;
    m.reject_unknown(
        {"host", "cores", "threads", "repeats", "concurrent_ranks", "transport", "torch_version"});
    out.host = m.string("host", kOptional).value_or("");
    out.transport = m.string("transport", kOptional).value_or("");
    out.torch_version = m.string("torch_version", kOptional).value_or("");
    for (auto [key, target] : {std::pair{"cores", &out.cores},
                               {"threads", &out.threads},
                               {"repeats", &out.repeats},
                               {"concurrent_ranks", &out.concurrent_ranks}}) {
        *target = static_cast<int>(m.integer(key, kOptional, 0, 1'000'000).value_or(0));
    }
    return out;
}

}  // namespace

Profile profile_from_json(const nlohmann::json& j) {
    Diagnostics d;
    const JsonObject r(j, d);
    if (!r.expect_format(Profile::kFormat, Profile::kVersion)) {
        throw InputError(std::move(d));
    }
    r.reject_unknown({"format", "version", "device_kind", "device_name", "microbatch_size",
                      "layers", "transfer", "collectives", "machine"});
    Profile p;
    p.device_kind = r.string("device_kind", kOptional).value_or("");
    p.device_name = r.string("device_name", kOptional).value_or("");
    p.microbatch_size = static_cast<int>(
        r.integer("microbatch_size", kRequired, 1, std::numeric_limits<int>::max()).value_or(1));
    if (auto layers = r.array("layers", kRequired)) {
        for (std::size_t i = 0; i < layers->size() && !layers->full(); ++i) {
            const JsonObject l(layers->element(i));
            if (l.ok()) {
                p.layers.push_back(read_layer(l, p.microbatch_size));
            }
        }
    }
    if (auto transfer = r.object("transfer", kOptional)) {
        p.transfer = read_fit(*transfer, p.transfer_samples, &p.ready_receive_us);
    }
    if (auto collectives = r.object("collectives", kOptional)) {
        read_collectives(*collectives, p);
    }
    if (auto machine = r.object("machine", kOptional)) {
        p.machine = read_machine(*machine);
    }
    if (!d.empty()) {
        throw InputError(std::move(d));
    }
    return p;
}

Profile load_profile_file(const std::filesystem::path& path) {
    const nlohmann::json j = parse_json_file(path);
    try {
        return profile_from_json(j);
    } catch (const InputError& e) {
        throw InputError(located_in(path, e.diagnostics()));
    }
}

}  // namespace pipewright
