#include "pipewright/core/profile.h"

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

nlohmann::json profile_to_json(const Profile& p) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : p.layers) {
        nlohmann::json lj = {{"name", l.name},
                             {"forward_ms", l.forward_ms},
                             {"backward_input_ms", l.backward_input_ms},
                             {"backward_weight_ms", l.backward_weight_ms}};
        if (l.backward_ms) {
            lj["backward_ms"] = *l.backward_ms;
        }
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
    for (const auto& [key, value] :
         {std::pair{"cores", m.cores}, {"threads", m.threads}, {"repeats", m.repeats}}) {
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

LayerProfile read_layer(const JsonObject& r) {
    LayerProfile l;
    r.reject_unknown({"name", "forward_ms", "backward_input_ms", "backward_weight_ms",
                      "backward_ms", "optimizer_ms", "activation_bytes", "parameters",
                      "output_shape"});
    l.name = r.string("name", kRequired).value_or("");
    l.forward_ms = r.number("forward_ms", kRequired, kMilliseconds).value_or(0);
    l.backward_input_ms = r.number("backward_input_ms", kRequired, kMilliseconds).value_or(0);
    l.backward_weight_ms = r.number("backward_weight_ms", kRequired, kMilliseconds).value_or(0);
    l.backward_ms = r.number("backward_ms", kOptional, kMilliseconds);
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
    return l;
}

// A link with the sizes it was fitted to: the transfer, or a collective.
std::optional<LinkSpec> read_fit(const JsonObject& t, std::vector<TransferSample>& samples_out) {
    t.reject_unknown({"bandwidth_GBps", "latency_us", "samples"});
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
    m.reject_unknown({"host", "cores", "threads", "repeats", "transport", "torch_version"});
    out.host = m.string("host", kOptional).value_or("");
    out.transport = m.string("transport", kOptional).value_or("");
    out.torch_version = m.string("torch_version", kOptional).value_or("");
    for (auto [key, target] :
         {std::pair{"cores", &out.cores}, {"threads", &out.threads}, {"repeats", &out.repeats}}) {
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
                p.layers.push_back(read_layer(l));
            }
        }
    }
    if (auto transfer = r.object("transfer", kOptional)) {
        p.transfer = read_fit(*transfer, p.transfer_samples);
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
