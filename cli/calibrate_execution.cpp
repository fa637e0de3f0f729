// `calibrate` carried out by the backend program (LibTorch).
#include <cstdio>

#include "backend_commands.h"
#include "option_checks.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/device_calibration.h"
#include "pipewright/core/device_catalog.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/quantity_format.h"
#include "pipewright/sim/device_calibration_fit.h"
#include "pipewright/sim/kernel_cost.h"
#include "pipewright/sim/layer_kernels.h"
#include "report_format.h"

namespace pipewright::cli {
namespace {

std::string tflops_text(double flops_per_s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", flops_per_s / 1e12);
    return text;
}

// The collectives measured among the machine's devices, with the bus
// bandwidth nccl-tests would print for them (bus_traffic_share).
void print_collectives(std::ostream& out, const DeviceCalibration& c) {
    if (c.collectives.empty()) {
        out << "\n  collectives: none measured"
            << (c.device_kind == "cuda" ? " (one GPU: no group to measure)" : "") << "\n";
        return;
    }
    out << "\n  collectives (" << (c.collective_library == "nccl" ? "NCCL" : "Gloo")
        << "), each member's buffer:\n\n";
    TextTable table({"collective", "members", "buffer", "time", "bus bandwidth"});
    for (const CollectiveSample& s : c.collectives) {
        const double bus = bus_traffic_share(s.kind, s.members) * static_cast<double>(s.bytes);
        table.add_row({std::string(to_string(s.kind)), std::to_string(s.members),
                       format_bytes(static_cast<double>(s.bytes)), format_duration(s.seconds),
                       format_bytes(bus / s.seconds) + "/s"});
    }
    for (std::size_t col = 1; col <= 4; ++col) {
        table.right_align(col);
    }
    table.print(out, "  ");
}

// The measured GEMMs of square shapes beside the catalog's model of them,
// and what the calibration changes.
void print_calibration(std::ostream& out, const DeviceCalibration& c, const DeviceSpec& catalog,
                       const std::string& path) {
    CalibrationFit fit;
    (void)calibrated_device(catalog, c, &fit);
    out << "Calibrated " << c.spec << " on " << c.device_name
        << (c.host.empty() ? std::string() : " (" + c.host + ")")
        << (c.threads > 0 ? ", " + std::to_string(c.threads) +
                                (c.threads == 1 ? " Torch thread" : " Torch threads")
                          : std::string())
        << ", median of " << c.repeats << "\n\n";
    out << "  launch     " << format_duration(c.launch_seconds) << " a kernel (catalog "
        << format_duration(catalog.kernel_overhead_s) << ")\n";
    out << "  copies     " << format_bytes(fit.copy_bandwidth_GBps * 1e9) << "/s read + written, "
        << format_fixed(fit.memory_efficiency, 2) << " of the datasheet's "
        << format_bytes(catalog.memory_bandwidth_GBps * 1e9) << "/s (catalog "
        << format_fixed(catalog.memory_efficiency, 2) << ")\n";
    out << "  GEMMs      " << fit.gemm_shapes << " shapes in " << to_string(c.dtype) << ", fastest "
        << tflops_text(fit.best_gemm_flops) << " TFLOP/s of "
        << tflops_text(catalog.matmul_flops_for(c.dtype, false)) << " peak; measured / catalog "
        << "model " << format_fixed(fit.gemm_ratio_median, 2) << " (median), "
        << format_fixed(fit.gemm_ratio_min, 2) << "–" << format_fixed(fit.gemm_ratio_max, 2)
        << "\n\n";
    TextTable table({"m = n = k", "measured", "TFLOP/s", "catalog model", "measured / model"});
    for (const GemmSample& g : c.gemms) {
        if (g.m != g.n || g.n != g.k) {
            continue;
        }
        const double d = static_cast<double>(g.m);
        const Kernel kernel = gemm_kernel("gemm", 1, d, d, d, dtype_bytes(c.dtype));
        const double modelled = kernel_time(kernel, catalog, c.dtype).seconds;
        table.add_row({std::to_string(g.m), format_duration(g.seconds),
                       tflops_text(kernel.flops / g.seconds), format_duration(modelled),
                       format_fixed(g.seconds / modelled, 2)});
    }
    for (std::size_t col = 0; col <= 4; ++col) {
        table.right_align(col);
    }
    table.print(out, "  ");
    print_collectives(out, c);
    out << "\nWrote " << path << "; use it with `pipewright simulate PROJECT --calibration " << path
        << "` (or plan): every " << c.spec << " of the project is priced with it\n";
}

}  // namespace

int run_calibrate(const CalibrateArgs& a, std::ostream& out, std::ostream& err) {
    if (!check_output_file("calibration", a.out, err)) {
        return kInvalidInput;
    }
    backend::CalibrationOptions o;
    o.device = a.device;
    o.spec = a.spec;
    if (a.dtype) {
        o.dtype = parse_dtype(*a.dtype);
    }
    o.threads = a.threads;
    o.repeats = a.repeats;
    o.dims = a.dims;
    o.collectives = !a.no_collectives;
    o.collective_bytes = a.collective_bytes;
    o.on_progress = [&err](const std::string& what) { err << "calibrate: " << what << '\n'; };
    DeviceCalibration calibration;
    try {
        calibration = backend::measure_device(o);
    } catch (const backend::BackendError& e) {
        err << "pipewright: calibrate: " << e.what() << '\n';
        return kInvalidInput;
    }
    const DeviceSpec* catalog = DeviceCatalog::builtin().find(calibration.spec);
    if (catalog == nullptr) {
        err << "pipewright: calibrate: \"" << calibration.spec
            << "\" is not a device of the catalog\n";
        return kInvalidInput;
    }
    const std::string text = device_calibration_to_json(calibration).dump(2) + "\n";
    try {
        write_file_atomically(a.out, text);
    } catch (const std::exception& e) {
        err << "pipewright: cannot write the calibration: " << e.what() << '\n';
        return kInvalidInput;
    }
    if (a.json) {
        out << text;
    } else {
        print_calibration(out, calibration, *catalog, a.out);
    }
    return kOk;
}

}  // namespace pipewright::cli
