#include "pipewright/core/device_calibration.h"

#include <set>
#include <tuple>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/json_parse.h"
#include "pipewright/core/json_reader.h"

namespace pipewright {
namespace {

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;
// Far past any kernel: a GEMM dimension of ten million, a copy of 10 TB, a
// kernel of 11.6 days.
constexpr std::int64_t kMaxDimension = 10'000'000;
constexpr std::int64_t kMaxCopyBytes = 10'000'000'000'000;
constexpr NumberRange kKernelSeconds{0, 1e6, true};

std::string shape_text(std::int64_t m, std::int64_t n, std::int64_t k) {
    return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
}

void read_gemms(const JsonValue& list, DeviceCalibration& c) {
    if (list.size() == 0) {
        list.error("needs at least one measured GEMM");
        return;
    }
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> shapes;
    for (std::size_t i = 0; i < list.size() && !list.full(); ++i) {
        const JsonObject g(list.element(i));
        if (!g.ok()) {
            continue;
        }
        g.reject_unknown({"m", "n", "k", "seconds"});
        const auto m = g.integer("m", kRequired, 1, kMaxDimension);
        const auto n = g.integer("n", kRequired, 1, kMaxDimension);
        const auto k = g.integer("k", kRequired, 1, kMaxDimension);
        const auto seconds = g.number("seconds", kRequired, kKernelSeconds);
        if (!m || !n || !k || !seconds) {
            continue;
        }
        if (!shapes.insert({*m, *n, *k}).second) {
            g.value().error("the shape " + shape_text(*m, *n, *k) + " is measured twice");
            continue;
        }
        c.gemms.push_back({*m, *n, *k, *seconds});
    }
}

// The GEMMs interpolate over a grid, which needs every combination.
void check_grid(const JsonValue& list, const DeviceCalibration& c) {
    std::set<std::int64_t> ms, ns, ks;
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> have;
    for (const GemmSample& g : c.gemms) {
        ms.insert(g.m);
        ns.insert(g.n);
        ks.insert(g.k);
        have.insert({g.m, g.n, g.k});
    }
    for (const auto m : ms) {
        for (const auto n : ns) {
            for (const auto k : ks) {
                if (!have.contains({m, n, k})) {
                    list.error(
                        "the shapes must form a grid (every combination of their m, n "
                        "and k values), but " +
                        shape_text(m, n, k) + " is missing");
                    return;
                }
            }
        }
    }
}

void read_copies(const JsonValue& list, DeviceCalibration& c) {
    if (list.size() == 0) {
        list.error("needs at least one measured copy");
        return;
    }
    for (std::size_t i = 0; i < list.size() && !list.full(); ++i) {
        const JsonObject s(list.element(i));
        if (!s.ok()) {
            continue;
        }
        s.reject_unknown({"bytes", "seconds"});
        const auto bytes = s.integer("bytes", kRequired, 1, kMaxCopyBytes);
        const auto seconds = s.number("seconds", kRequired, kKernelSeconds);
        if (bytes && seconds) {
            c.copies.push_back({*bytes, *seconds});
        }
    }
}

// Optional: calibrations written before collectives were measured have none.
void read_collectives(const JsonValue& list, DeviceCalibration& c) {
    std::set<std::tuple<CollectiveKind, int, std::int64_t>> seen;
    for (std::size_t i = 0; i < list.size() && !list.full(); ++i) {
        const JsonObject s(list.element(i));
        if (!s.ok()) {
            continue;
        }
        s.reject_unknown({"kind", "members", "bytes", "seconds"});
        const auto kind =
            s.one_of<CollectiveKind>("kind", kRequired,
                                     {{"all-reduce", CollectiveKind::all_reduce},
                                      {"reduce-scatter", CollectiveKind::reduce_scatter},
                                      {"all-gather", CollectiveKind::all_gather},
                                      {"all-to-all", CollectiveKind::all_to_all}});
        const auto members = s.integer("members", kRequired, 2, 1'000'000);
        const auto bytes = s.integer("bytes", kRequired, 1, kMaxCopyBytes);
        const auto seconds = s.number("seconds", kRequired, kKernelSeconds);
        if (!kind || !members || !bytes || !seconds) {
            continue;
        }
        if (!seen.insert({*kind, static_cast<int>(*members), *bytes}).second) {
            s.value().error("the " + std::string(to_string(*kind)) + " of " +
                            std::to_string(*bytes) + " bytes among " + std::to_string(*members) +
                            " members is measured twice");
            continue;
        }
        c.collectives.push_back({*kind, static_cast<int>(*members), *bytes, *seconds});
    }
}

void read_machine(const JsonObject& m, DeviceCalibration& c) {
    m.reject_unknown({"host", "torch_version", "cores", "threads", "repeats"});
    c.host = m.string("host", kOptional).value_or("");
    c.torch_version = m.string("torch_version", kOptional).value_or("");
    c.cores = static_cast<int>(m.integer("cores", kOptional, 0, 1'000'000).value_or(0));
    c.threads = static_cast<int>(m.integer("threads", kOptional, 0, 1'000'000).value_or(0));
    c.repeats = static_cast<int>(m.integer("repeats", kOptional, 0, 1'000'000).value_or(0));
}

}  // namespace

nlohmann::json device_calibration_to_json(const DeviceCalibration& c) {
    nlohmann::json j;
    j["format"] = DeviceCalibration::kFormat;
    j["version"] = DeviceCalibration::kVersion;
    j["spec"] = c.spec;
    if (!c.device_kind.empty()) {
        j["device_kind"] = c.device_kind;
    }
    if (!c.device_name.empty()) {
        j["device_name"] = c.device_name;
    }
    j["dtype"] = std::string(to_string(c.dtype));
    j["launch_seconds"] = c.launch_seconds;
    nlohmann::json gemms = nlohmann::json::array();
    for (const GemmSample& g : c.gemms) {
        gemms.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"seconds", g.seconds}});
    }
    j["gemms"] = std::move(gemms);
    nlohmann::json copies = nlohmann::json::array();
    for (const CopySample& s : c.copies) {
        copies.push_back({{"bytes", s.bytes}, {"seconds", s.seconds}});
    }
    j["copies"] = std::move(copies);
    if (!c.collectives.empty()) {
        nlohmann::json collectives = nlohmann::json::array();
        for (const CollectiveSample& s : c.collectives) {
            collectives.push_back({{"kind", std::string(to_string(s.kind))},
                                   {"members", s.members},
                                   {"bytes", s.bytes},
                                   {"seconds", s.seconds}});
        }
        j["collectives"] = std::move(collectives);
    }
    if (!c.collective_library.empty()) {
        j["collective_library"] = c.collective_library;
    }
    nlohmann::json machine = nlohmann::json::object();
    if (!c.host.empty()) {
        machine["host"] = c.host;
    }
    if (!c.torch_version.empty()) {
        machine["torch_version"] = c.torch_version;
    }
    if (c.cores > 0) {
        machine["cores"] = c.cores;
    }
    if (c.threads > 0) {
        machine["threads"] = c.threads;
    }
    if (c.repeats > 0) {
        machine["repeats"] = c.repeats;
    }
    if (!machine.empty()) {
        j["machine"] = std::move(machine);
    }
    return j;
}

DeviceCalibration device_calibration_from_json(const nlohmann::json& j) {
    Diagnostics d;
    const JsonObject r(j, d);
    if (!r.expect_format(DeviceCalibration::kFormat, DeviceCalibration::kVersion)) {
        throw InputError(std::move(d));
    }
    r.reject_unknown({"format", "version", "spec", "device_kind", "device_name", "dtype",
                      "launch_seconds", "gemms", "copies", "collectives", "collective_library",
                      "machine"});
    DeviceCalibration c;
    c.spec = r.string("spec", kRequired).value_or("");
    if (r.has("spec") && c.spec.empty() && d.empty()) {
        r.error("spec", "must name a device of the catalog (`pipewright devices`), got \"\"");
    }
    c.device_kind = r.string("device_kind", kOptional).value_or("");
    c.device_name = r.string("device_name", kOptional).value_or("");
    c.dtype = r.one_of<DType>("dtype", kRequired,
                              {{"float32", DType::float32},
                               {"float16", DType::float16},
                               {"bfloat16", DType::bfloat16}})
                  .value_or(DType::float32);
    c.launch_seconds = r.number("launch_seconds", kRequired, {0, 1}).value_or(0);
    if (const auto gemms = r.array("gemms", kRequired)) {
        read_gemms(*gemms, c);
        if (d.empty()) {
            check_grid(*gemms, c);
        }
    }
    if (const auto copies = r.array("copies", kRequired)) {
        read_copies(*copies, c);
    }
    if (const auto collectives = r.array("collectives", kOptional)) {
        read_collectives(*collectives, c);
    }
    if (r.has("collective_library")) {
        c.collective_library = r.one_of<std::string>("collective_library", kOptional,
                                                     {{"nccl", "nccl"}, {"gloo", "gloo"}})
                                   .value_or("");
    }
    if (const auto machine = r.object("machine", kOptional)) {
        read_machine(*machine, c);
    }
    if (!d.empty()) {
        throw InputError(std::move(d));
    }
    return c;
}

DeviceCalibration load_device_calibration_file(const std::filesystem::path& path) {
    const nlohmann::json j = parse_json_file(path);
    try {
        return device_calibration_from_json(j);
    } catch (const InputError& e) {
        throw InputError(located_in(path, e.diagnostics()));
    }
}

}  // namespace pipewright
