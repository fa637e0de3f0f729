#include "pipewright/sim/device_calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/layer_kernels.h"

namespace pipewright {
namespace {

// The largest copy is the least disturbed by caches and launch costs.
void fit_memory(DeviceSpec& d, const DeviceCalibration& c, CalibrationFit& fit) {
    const auto largest = std::max_element(
        c.copies.begin(), c.copies.end(),
        [](const CopySample& a, const CopySample& b) { return a.bytes < b.bytes; });
    if (largest == c.copies.end()) {
        return;
    }
    const double busy = std::max(largest->seconds - c.launch_seconds, largest->seconds * 0.5);
    const double bandwidth = 2.0 * static_cast<double>(largest->bytes) / busy;
    fit.copy_bandwidth_GBps = bandwidth / 1e9;
    if (d.memory_bandwidth_GBps <= 0) {
        d.memory_bandwidth_GBps = fit.copy_bandwidth_GBps;
    }
    d.memory_efficiency = bandwidth / (d.memory_bandwidth_GBps * 1e9);
    fit.memory_efficiency = d.memory_efficiency;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 1 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The measured/modelled ratio at every grid point, the model priced with
// the device's calibrated launch and bandwidth but no correction yet.
std::shared_ptr<const GemmCorrection> fit_gemms(const DeviceSpec& d, const DeviceCalibration& c,
                                                CalibrationFit& fit) {
    auto correction = std::make_shared<GemmCorrection>();
    correction->dtype = c.dtype;
    std::set<double> ms, ns, ks;
    for (const GemmSample& g : c.gemms) {
        ms.insert(static_cast<double>(g.m));
        ns.insert(static_cast<double>(g.n));
        ks.insert(static_cast<double>(g.k));
    }
    correction->m.assign(ms.begin(), ms.end());
    correction->n.assign(ns.begin(), ns.end());
    correction->k.assign(ks.begin(), ks.end());
    correction->log_ratio.assign(ms.size() * ns.size() * ks.size(), 0.0);
    const auto index = [](const std::vector<double>& grid, double v) {
        return static_cast<std::size_t>(std::lower_bound(grid.begin(), grid.end(), v) -
                                        grid.begin());
    };
    std::vector<double> ratios;
    const double element_bytes = dtype_bytes(c.dtype);
    for (const GemmSample& g : c.gemms) {
        const double m = static_cast<double>(g.m);
        const double n = static_cast<double>(g.n);
        const double k = static_cast<double>(g.k);
        const Kernel kernel = gemm_kernel("calibration", 1, m, n, k, element_bytes);
        const double modelled = kernel_time(kernel, d, c.dtype).seconds;
        const double ratio = modelled > 0 ? g.seconds / modelled : 1;
        ratios.push_back(ratio);
        fit.best_gemm_flops = std::max(fit.best_gemm_flops, kernel.flops / g.seconds);
        const std::size_t at =
            (index(correction->m, m) * ns.size() + index(correction->n, n)) * ks.size() +
            index(correction->k, k);
        correction->log_ratio[at] = std::log(ratio);
    }
    fit.gemm_shapes = ratios.size();
    if (!ratios.empty()) {
        fit.gemm_ratio_min = *std::min_element(ratios.begin(), ratios.end());
        fit.gemm_ratio_max = *std::max_element(ratios.begin(), ratios.end());
        fit.gemm_ratio_median = median(ratios);
    }
    return correction;
}

void fit_collectives(DeviceSpec& d, const DeviceCalibration& c, CalibrationFit& fit) {
    d.collectives = nullptr;
    if (c.collectives.empty()) {
        return;
    }
    d.collectives = std::make_shared<const MeasuredCollectives>(c.collectives);
    fit.collective_samples = c.collectives.size();
    fit.largest_group = d.collectives->largest_group();
    fit.collective_library = c.collective_library;
    for (const CollectiveSample& s : c.collectives) {
        if (s.kind == CollectiveKind::all_reduce && s.members == fit.largest_group &&
            s.seconds > 0) {
            fit.all_reduce_bus_GBps = std::max(fit.all_reduce_bus_GBps,
                                               bus_traffic_share(s.kind, s.members) *
                                                   static_cast<double>(s.bytes) / s.seconds / 1e9);
        }
    }
}

}  // namespace

DeviceSpec calibrated_device(const DeviceSpec& device, const DeviceCalibration& c,
                             CalibrationFit* fit_out) {
    CalibrationFit fit;
    fit.spec = device.name;
    fit.device_name = c.device_name;
    fit.dtype = c.dtype;
    DeviceSpec d = device;
    d.gemm_correction = nullptr;
    d.kernel_overhead_s = c.launch_seconds;
    fit.kernel_overhead_s = c.launch_seconds;
    fit_memory(d, c, fit);
    d.gemm_correction = fit_gemms(d, c, fit);
    fit_collectives(d, c, fit);
    if (c.device_kind == "cpu") {
        d.calibrated_cores = c.cores;
        d.calibrated_threads = c.threads;
    }
    if (fit_out != nullptr) {
        *fit_out = fit;
    }
    return d;
}

namespace {

std::string collectives_text(const CalibrationFit& f) {
    if (f.collective_samples == 0) {
        return "";
    }
    const std::string library = f.collective_library == "nccl"   ? "NCCL "
                                : f.collective_library == "gloo" ? "Gloo "
                                                                 : "";
    const std::string devices = f.spec == "cpu" ? "CPU workers" : f.spec + " GPUs";
    std::string text =
        "; " + library + "collectives of up to " + std::to_string(f.largest_group) + " " + devices;
    if (f.all_reduce_bus_GBps > 0) {
        text +=
            ", all-reduce bus bandwidth up to " + format_bytes(f.all_reduce_bus_GBps * 1e9) + "/s";
    }
    return text;
}

}  // namespace

std::string describe_calibration(const CalibrationFit& f, const std::string& file) {
    return f.spec + " kernels as measured on " +
           (f.device_name.empty() ? std::string("its device") : f.device_name) + " (" + file +
           "): launch " + format_duration(f.kernel_overhead_s) + ", copies at " +
           format_bytes(f.copy_bandwidth_GBps * 1e9) + "/s, " + std::string(to_string(f.dtype)) +
           " GEMMs " + format_fixed(f.gemm_ratio_min, 2) + "–" + format_fixed(f.gemm_ratio_max, 2) +
           " × the model's time" + collectives_text(f);
}

DeviceCatalog calibrated_catalog(const DeviceCatalog& catalog,
                                 const std::vector<DeviceCalibration>& calibrations,
                                 std::vector<CalibrationFit>* fits) {
    DeviceCatalog out = catalog;
    std::set<std::string> seen;
    Diagnostics problems;
    for (const DeviceCalibration& c : calibrations) {
        const DeviceSpec* spec = catalog.find(c.spec);
        if (spec == nullptr) {
            problems.add("spec", "\"" + c.spec +
                                     "\" is not a device of the catalog (`pipewright devices` "
                                     "lists them)");
            continue;
        }
        if (!seen.insert(c.spec).second) {
            problems.add("spec", "two calibrations are of " + c.spec + "; give one");
            continue;
        }
        CalibrationFit fit;
        out = out.with(calibrated_device(*spec, c, &fit));
        if (fits != nullptr) {
            fits->push_back(fit);
        }
    }
    if (!problems.empty()) {
        throw InputError(std::move(problems));
    }
    return out;
}

DeviceCatalog catalog_with_calibration_files(const DeviceCatalog& catalog,
                                             const std::vector<std::string>& paths,
                                             std::vector<CalibrationFit>* fits) {
    std::vector<DeviceCalibration> calibrations;
    std::map<std::string, std::string> file_of_spec;
    Diagnostics problems;
    for (const std::string& path : paths) {
        try {
            DeviceCalibration c = load_device_calibration_file(path);
            if (catalog.find(c.spec) == nullptr) {
                problems.add(path + ": spec", "\"" + c.spec +
                                                  "\" is not a device of the catalog "
                                                  "(`pipewright devices` lists them)");
            } else if (const auto [at, fresh] = file_of_spec.emplace(c.spec, path); !fresh) {
                problems.add(path + ": spec", at->second + " and " + path + " both calibrate " +
                                                  c.spec + "; give one");
            } else {
                calibrations.push_back(std::move(c));
            }
        } catch (const InputError& e) {
            problems.append(e.diagnostics());
        }
    }
    if (!problems.empty()) {
        throw InputError(std::move(problems));
    }
    return calibrated_catalog(catalog, calibrations, fits);
}

}  // namespace pipewright
