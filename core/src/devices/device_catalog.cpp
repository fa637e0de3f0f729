#include "pipewright/core/device_catalog.h"

#include <stdexcept>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/input_limits.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/json_reader.h"

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

double DeviceSpec::matmul_flops_for(DType dtype, bool tf32) const {
    if (dtype == DType::float32 && tf32 && tf32_flops > 0) {
        return tf32_flops;
    }
    return flops_for(dtype);
}

std::optional<AttentionEfficiency> DeviceSpec::attention_rate(AttentionKernel kernel) const {
    if (auto it = attention_efficiency.find(kernel); it != attention_efficiency.end()) {
        return it->second;
    }
    if (kernel != AttentionKernel::flash2) {
        return std::nullopt;
    }
    return AttentionEfficiency{kFlash2ShareOfMatmul.forward * matmul_efficiency,
                               kFlash2ShareOfMatmul.backward * matmul_efficiency};
}

namespace {

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;

// "attention_efficiency": {"flash3": {"forward": 0.62, "backward": 0.57}, …}
void read_attention_efficiency(const JsonObject& d, DeviceSpec& spec) {
    const auto kernels = d.object("attention_efficiency", kOptional);
    if (!kernels) {
        return;
    }
    for (const auto& [key, value] : kernels->value().json().items()) {
        const auto kernel = parse_attention_kernel(key);
        if (!kernel) {
            kernels->error(key, "not an attention kernel (expected flash2, cudnn or flash3)");
            continue;
        }
        const auto rates = kernels->object(key, kRequired);
        if (!rates) {
            continue;
        }
        rates->reject_unknown({"forward", "backward"});
        const auto forward = rates->number("forward", kRequired, {0.01, 1});
        const auto backward = rates->number("backward", kRequired, {0.01, 1});
        if (forward && backward) {
            spec.attention_efficiency[*kernel] = {*forward, *backward};
        }
    }
}

std::optional<DeviceSpec> read_spec(const JsonObject& d) {
    DeviceSpec spec;
    d.reject_unknown({"name", "kind", "description", "memory_GiB", "memory_bandwidth_GBps",
                      "kernel_overhead_us", "gemm_overhead_us", "peak_tflops", "sm_count",
                      "l2_bandwidth_GBps", "matmul_efficiency", "memory_efficiency",
                      "attention_efficiency", "fp8_transposed_copies", "tma_multicast"});
    const auto name = d.string("name", kRequired);
    spec.kind =
        d.one_of<std::string>("kind", kOptional, {{"gpu", "gpu"}, {"cpu", "cpu"}}).value_or("gpu");
    spec.description = d.string("description", kOptional).value_or("");
    const auto memory =
        d.number("memory_GiB", kRequired, {limits::kMinMemoryGiB, limits::kMaxMemoryGiB});
    spec.memory_bytes = static_cast<std::int64_t>(memory.value_or(0) * 1024.0 * 1024.0 * 1024.0);
    spec.memory_bandwidth_GBps =
        d.number("memory_bandwidth_GBps", kOptional, {0, 1e9}).value_or(0.0);
    // A typical launch when the catalog does not say (docs/simulator.md).
    spec.kernel_overhead_s = d.number("kernel_overhead_us", kOptional, {0, 1e9})
                                 .value_or(spec.kind == "cpu" ? 2.0 : 3.0) *
                             1e-6;
    spec.gemm_overhead_s = d.number("gemm_overhead_us", kOptional, {0, 1e9}).value_or(0.0) * 1e-6;
    spec.fp8_transposed_copies = d.boolean("fp8_transposed_copies", kOptional).value_or(false);
    spec.sm_count = static_cast<int>(d.integer("sm_count", kOptional, 0, 1 << 20).value_or(0));
    spec.l2_bandwidth_GBps = d.number("l2_bandwidth_GBps", kOptional, {0, 1e9}).value_or(0.0);
    spec.tma_multicast = d.boolean("tma_multicast", kOptional).value_or(false);
    spec.matmul_efficiency =
        d.number("matmul_efficiency", kOptional, {0.01, 1}).value_or(kDefaultMatmulEfficiency);
    spec.memory_efficiency =
        d.number("memory_efficiency", kOptional, {0.01, 1}).value_or(kDefaultMemoryEfficiency);
    read_attention_efficiency(d, spec);
    const auto peaks = d.object("peak_tflops", kRequired);
    if (peaks) {
        for (const auto& [key, value] : peaks->value().json().items()) {
            if (key == "tfloat32" || key == "float8") {
                if (auto tflops = peaks->number(key, kRequired,
                                                {limits::kMinPeakTflops, limits::kMaxPeakTflops})) {
                    (key == "float8" ? spec.fp8_flops : spec.tf32_flops) = *tflops * 1e12;
                }
                continue;
            }
            const auto dtype = parse_dtype(key);
            if (!dtype || *dtype == DType::int64) {
                peaks->error(key,
                             "not a compute precision (expected float32, tfloat32, float16, "
                             "bfloat16 or float8)");
                continue;
            }
            if (auto tflops = peaks->number(key, kRequired,
                                            {limits::kMinPeakTflops, limits::kMaxPeakTflops})) {
                spec.peak_flops[*dtype] = *tflops * 1e12;
            }
        }
        if (!peaks->has("float32")) {
            // Other dtypes fall back to float32, so it must be there.
            peaks->error("float32", "missing (every device needs a float32 figure)");
        }
    }
    if (!name || !peaks) {
        return std::nullopt;
    }
    spec.name = *name;
    return spec;
}

}  // namespace

DeviceCatalog DeviceCatalog::from_json(const nlohmann::json& j) {
    Diagnostics diagnostics;
    const JsonObject r(j, diagnostics);
    if (!r.expect_format("pipewright-devices", 1)) {
        throw InputError(std::move(diagnostics));
    }
    r.reject_unknown({"format", "version", "devices"});
    DeviceCatalog catalog;
    if (auto list = r.array("devices", kRequired)) {
        for (std::size_t i = 0; i < list->size(); ++i) {
            const JsonObject d(list->element(i));
            if (!d.ok()) {
                continue;
            }
            auto spec = read_spec(d);
            if (!spec) {
                continue;
            }
            if (catalog.find(spec->name) != nullptr) {
                d.error("name", "device \"" + spec->name + "\" is listed twice");
                continue;
            }
            catalog.specs_.push_back(std::move(*spec));
        }
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

DeviceCatalog DeviceCatalog::with(DeviceSpec spec) const {
    DeviceCatalog out = *this;
    for (auto& s : out.specs_) {
        if (s.name == spec.name) {
            s = std::move(spec);
            return out;
        }
    }
    throw std::invalid_argument("no catalog device named " + spec.name);
}

}  // namespace pipewright
