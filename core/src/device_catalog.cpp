#include "pipewright/core/device_catalog.h"

#include <cmath>
#include <stdexcept>

#include "json_reader.h"
#include "pipewright/core/diagnostics.h"
#include "pipewright/core/input_limits.h"
#include "pipewright/core/json_parse.h"

namespace pipewright {

namespace embedded {
extern const char* const kBuiltinDevicesJson;
}

double DeviceSpec::flops_for(DType dtype) const {
    if (auto it = peak_flops.find(dtype); it != peak_flops.end()) {
        return it->second;
    }
    if (auto it = peak_flops.find(DType::float32); it != peak_flops.end()) {
        return it->second;
    }
    return 0;
}

namespace {

double number_in(const nlohmann::json& j, const std::string& key, const std::string& path,
                 double min, double max, Diagnostics& diagnostics) {
    if (!j.contains(key)) {
        diagnostics.add(path + "." + key, "missing");
        return 0;
    }
    const auto& v = j.at(key);
    if (!v.is_number() || !(v.get<double>() >= min) || !(v.get<double>() <= max)) {
        diagnostics.add(path + "." + key, "must be a number from " + detail::show_limit(min) +
                                              " to " + detail::show_limit(max) + ", got " +
                                              v.dump());
        return 0;
    }
    return v.get<double>();
}

}  // namespace

DeviceCatalog DeviceCatalog::from_json(const nlohmann::json& j) {
    Diagnostics diagnostics;
    DeviceCatalog catalog;
    if (!j.is_object() || j.value("format", "") != "pipewright-devices") {
        throw InputError("format", "expected \"pipewright-devices\"");
    }
    if (!j.contains("devices") || !j["devices"].is_array()) {
        throw InputError("devices", "must be a list of device specs");
    }
    const auto& list = j["devices"];
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& d = list[i];
        const std::string path = "devices[" + std::to_string(i) + "]";
        if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) {
            diagnostics.add(path + ".name", "every device needs a name");
            continue;
        }
        DeviceSpec spec;
        spec.name = d["name"].get<std::string>();
        auto text = [&](const char* key, const char* fallback) {
            if (!d.contains(key)) {
                return std::string(fallback);
            }
            if (!d[key].is_string()) {
                diagnostics.add(path + "." + key, "must be text");
                return std::string(fallback);
            }
            return d[key].get<std::string>();
        };
        auto number = [&](const char* key, double fallback) {
            if (!d.contains(key)) {
                return fallback;
            }
            if (!d[key].is_number() || !(d[key].get<double>() >= 0) ||
                !(d[key].get<double>() <= 1e9)) {
                diagnostics.add(path + "." + key, "must be a number from 0 to 1000000000");
                return fallback;
            }
            return d[key].get<double>();
        };
        spec.kind = text("kind", "gpu");
        if (spec.kind != "gpu" && spec.kind != "cpu") {
            diagnostics.add(path + ".kind", "must be \"gpu\" or \"cpu\"");
        }
        spec.description = text("description", "");
        spec.memory_bytes =
            static_cast<std::int64_t>(number_in(d, "memory_GiB", path, limits::kMinMemoryGiB,
                                                limits::kMaxMemoryGiB, diagnostics) *
                                      1024.0 * 1024.0 * 1024.0);
        spec.memory_bandwidth_GBps = number("memory_bandwidth_GBps", 0.0);
        // Typical launch-plus-sync cost when the catalog does not say.
        spec.kernel_overhead_s =
            number("kernel_overhead_us", spec.kind == "cpu" ? 2.0 : 5.0) * 1e-6;
        if (!d.contains("peak_tflops") || !d["peak_tflops"].is_object()) {
            diagnostics.add(path + ".peak_tflops", "must map dtypes to TFLOP/s");
            continue;
        }
        for (const auto& [key, value] : d["peak_tflops"].items()) {
            auto dtype = parse_dtype(key);
            if (!dtype || *dtype == DType::int64 || !value.is_number() ||
                !(value.get<double>() >= limits::kMinPeakTflops) ||
                !(value.get<double>() <= limits::kMaxPeakTflops)) {
                diagnostics.add(path + ".peak_tflops." + key,
                                "expected TFLOP/s from " +
                                    detail::show_limit(limits::kMinPeakTflops) + " to " +
                                    detail::show_limit(limits::kMaxPeakTflops) +
                                    " for float32, float16 or bfloat16");
                continue;
            }
            spec.peak_flops[*dtype] = value.get<double>() * 1e12;
        }
        if (spec.peak_flops.count(DType::float32) == 0) {
            // Other dtypes fall back to float32, so it must be there.
            diagnostics.add(path + ".peak_tflops.float32",
                            "missing (every device needs a float32 figure)");
        }
        if (catalog.find(spec.name) != nullptr) {
            diagnostics.add(path + ".name", "device \"" + spec.name + "\" is listed twice");
            continue;
        }
        catalog.specs_.push_back(std::move(spec));
    }
    if (!diagnostics.empty()) {
        throw InputError(std::move(diagnostics));
    }
    return catalog;
}

const DeviceCatalog& DeviceCatalog::builtin() {
    static const DeviceCatalog catalog = [] {
        ParsedJson parsed = parse_json(embedded::kBuiltinDevicesJson);
        if (!parsed.value || !parsed.problems.empty()) {
            // Compiled in and tested: reaching this is a build defect.
            throw std::logic_error("the builtin device catalog: " + parsed.problems.format());
        }
        return from_json(*parsed.value);
    }();
    return catalog;
}

const DeviceSpec* DeviceCatalog::find(std::string_view name) const {
    for (const auto& s : specs_) {
        if (s.name == name) {
            return &s;
        }
    }
    return nullptr;
}

std::vector<std::string> DeviceCatalog::names() const {
    std::vector<std::string> out;
    out.reserve(specs_.size());
    for (const auto& s : specs_) {
        out.push_back(s.name);
    }
    return out;
}

}  // namespace pipewright
