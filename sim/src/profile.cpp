#include "pipewright/sim/profile.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/input_limits.h"
#include "pipewright/core/json_parse.h"
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

// A limit in a message: "1000000", "0.001".
std::string show_limit(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.15g", value);
    return buffer;
}

double read_ms(const nlohmann::json& j, const char* key, const std::string& path, Diagnostics& d) {
    if (!j.contains(key) || !j[key].is_number() || !std::isfinite(j[key].get<double>()) ||
        j[key].get<double>() < 0 || j[key].get<double>() > limits::kMaxMilliseconds) {
        d.add(path + "." + key,
              "must be a number of milliseconds from 0 to " + show_limit(limits::kMaxMilliseconds));
        return 0;
    }
    return j[key].get<double>();
}

std::vector<TransferSample> read_samples(const nlohmann::json& t, Diagnostics& d) {
    std::vector<TransferSample> out;
    if (!t.contains("samples")) {
        return out;
    }
    if (!t["samples"].is_array()) {
        d.add("transfer.samples", "must be a list of {bytes, seconds}");
        return out;
    }
    for (std::size_t i = 0; i < t["samples"].size(); ++i) {
        const auto& s = t["samples"][i];
        const auto positive = [&](const char* key) {
            return s.is_object() && s.contains(key) && s[key].is_number() &&
                   std::isfinite(s[key].get<double>()) && s[key].get<double>() >= 0;
        };
        if (!positive("bytes") || !positive("seconds")) {
            d.add("transfer.samples[" + std::to_string(i) + "]",
                  "needs non-negative numbers bytes and seconds");
            continue;
        }
        out.push_back({s["bytes"].get<double>(), s["seconds"].get<double>()});
    }
    return out;
}

ProfileMachine read_machine(const nlohmann::json& j, Diagnostics& d) {
    ProfileMachine m;
    if (!j.contains("machine")) {
        return m;
    }
    const auto& mj = j["machine"];
    if (!mj.is_object()) {
        d.add("machine", "must be an object describing where the profile was measured");
        return m;
    }
    for (auto [key, target] : {std::pair{"host", &m.host},
                               {"transport", &m.transport},
                               {"torch_version", &m.torch_version}}) {
        if (mj.contains(key)) {
            if (!mj[key].is_string()) {
                d.add(std::string("machine.") + key, "must be a string");
            } else {
                *target = mj[key].get<std::string>();
            }
        }
    }
    for (auto [key, target] :
         {std::pair{"cores", &m.cores}, {"threads", &m.threads}, {"repeats", &m.repeats}}) {
        if (mj.contains(key)) {
            if (!mj[key].is_number_integer() || mj[key].get<std::int64_t>() < 0 ||
                mj[key].get<std::int64_t>() > 1'000'000) {
                d.add(std::string("machine.") + key, "must be a non-negative whole number");
            } else {
                *target = mj[key].get<int>();
            }
        }
    }
    return m;
}

}  // namespace

Profile profile_from_json(const nlohmann::json& j) {
    Diagnostics d;
    Profile p;
    if (!j.is_object() || j.value("format", "") != Profile::kFormat) {
        throw InputError("format", "not a Pipewright profile (expected \"pipewright-profile\")");
    }
    if (j.value("version", 0) != Profile::kVersion) {
        throw InputError("version", "this Pipewright reads version 1 profiles");
    }
    p.device_kind = j.value("device_kind", "");
    p.device_name = j.value("device_name", "");
    if (!j.contains("microbatch_size") || !j["microbatch_size"].is_number_integer() ||
        j["microbatch_size"].get<std::int64_t>() < 1 ||
        j["microbatch_size"].get<std::uint64_t>() > std::numeric_limits<int>::max()) {
        d.add("microbatch_size", "must be a whole number from 1 to " +
                                     std::to_string(std::numeric_limits<int>::max()));
    } else {
        p.microbatch_size = j["microbatch_size"].get<int>();
    }
    if (!j.contains("layers") || !j["layers"].is_array()) {
        d.add("layers", "must be a list of measured layers");
    } else {
        for (std::size_t i = 0; i < j["layers"].size(); ++i) {
            const auto& lj = j["layers"][i];
            const std::string path = "layers[" + std::to_string(i) + "]";
            if (!lj.is_object() || !lj.contains("name") || !lj["name"].is_string()) {
                d.add(path + ".name", "every measured layer needs the layer's name");
                continue;
            }
            LayerProfile l;
            l.name = lj["name"].get<std::string>();
            l.forward_ms = read_ms(lj, "forward_ms", path, d);
            l.backward_input_ms = read_ms(lj, "backward_input_ms", path, d);
            l.backward_weight_ms = read_ms(lj, "backward_weight_ms", path, d);
            for (auto [key, target] : {std::pair{"backward_ms", &l.backward_ms},
                                       std::pair{"optimizer_ms", &l.optimizer_ms}}) {
                if (lj.contains(key)) {
                    *target = read_ms(lj, key, path, d);
                }
            }
            if (lj.contains("activation_bytes")) {
                // The same bound as in a project: a larger count would wrap
                // once multiplied by the micro-batches in flight.
                const auto& bytes = lj["activation_bytes"];
                if (!bytes.is_number_integer() || bytes.get<std::int64_t>() < 0 ||
                    bytes.get<std::uint64_t>() >
                        static_cast<std::uint64_t>(limits::kMaxActivationBytes)) {
                    d.add(path + ".activation_bytes",
                          "must be a whole number of bytes from 0 to " +
                              std::to_string(limits::kMaxActivationBytes) + ", got " +
                              bytes.dump());
                } else {
                    l.activation_bytes = lj["activation_bytes"].get<std::int64_t>();
                }
            }
            p.layers.push_back(std::move(l));
        }
    }
    if (j.contains("transfer")) {
        const auto& t = j["transfer"];
        const auto within = [&](const char* key, double min, double max) {
            return t.is_object() && t.contains(key) && t[key].is_number() &&
                   t[key].get<double>() >= min && t[key].get<double>() <= max;
        };
        if (!within("bandwidth_GBps", limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps) ||
            !within("latency_us", 0, limits::kMaxLatencyUs)) {
            d.add("transfer", "needs bandwidth_GBps from " + show_limit(limits::kMinBandwidthGBps) +
                                  " to " + show_limit(limits::kMaxBandwidthGBps) +
                                  " and latency_us from 0 to " + show_limit(limits::kMaxLatencyUs));
        } else {
            p.transfer = LinkSpec{t["bandwidth_GBps"].get<double>(), t["latency_us"].get<double>()};
            p.transfer_samples = read_samples(t, d);
        }
    }
    p.machine = read_machine(j, d);
    if (!d.empty()) {
        throw InputError(std::move(d));
    }
    return p;
}

Profile load_profile_file(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_text_file(path);
    } catch (const std::exception& e) {
        throw InputError("--profile", e.what());
    }
    ParsedJson parsed = parse_json(text);
    // Name the file in every location so that each message stands alone.
    auto located = [&](const Diagnostics& problems) {
        Diagnostics d;
        for (const auto& item : problems.items()) {
            d.add(path.filename().string() + ": " + item.path, item.message);
        }
        return d;
    };
    if (!parsed.problems.empty()) {
        // A duplicated key makes the measured figures ambiguous: refuse them.
        throw InputError(located(parsed.problems));
    }
    try {
        return profile_from_json(*parsed.value);
    } catch (const InputError& e) {
        throw InputError(located(e.diagnostics()));
    }
}

}  // namespace pipewright
