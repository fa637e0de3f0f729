// `pipewright calibrate`: each kernel timed on its own, back to back as a
// training step queues them, so a GPU's launches overlap as they do there.
#include "pipewright/backend/device_calibration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <thread>

#include <torch/torch.h>

#include "execution/compute_device.h"
#include "pipewright/backend/backend_error.h"
#include "profile/device_collectives.h"
#include "profile/host_name.h"
#include "profile/measured_dtype.h"
#include "profile/profiler_timing.h"

namespace pipewright::backend {
namespace {

using profiling::median;
using profiling::now_s;

// A timed sample runs the kernel this long at least, so that the clock and a
// GPU's synchronisation are a small part of it.
double sample_seconds(const torch::Device& device) {
    return device.is_cuda() ? 2e-3 : 10e-3;
}

// Median seconds of one `kernel()` over `repeats` samples of back-to-back
// calls, after one untimed call that also tells how many calls fill a sample.
template <class Kernel>
double time_kernel(const torch::Device& device, int repeats, Kernel kernel) {
    synchronize(device);
    double start = now_s();
    kernel();
    synchronize(device);
    const double once = std::max(now_s() - start, 1e-7);
    const int calls =
        static_cast<int>(std::clamp(std::ceil(sample_seconds(device) / once), 1.0, 10000.0));
    std::vector<double> samples;
    for (int r = 0; r < repeats; ++r) {
        synchronize(device);
        start = now_s();
        for (int c = 0; c < calls; ++c) {
            kernel();
        }
        synchronize(device);
        samples.push_back((now_s() - start) / calls);
    }
    return median(std::move(samples));
}

std::string shape_text(std::int64_t m, std::int64_t n, std::int64_t k) {
    return std::to_string(m) + " × " + std::to_string(n) + " × " + std::to_string(k);
}

void tell(const CalibrationOptions& o, const std::string& what) {
    if (o.on_progress) {
        o.on_progress(what);
    }
}

// How many copies of a GEMM's operands the calls rotate through: enough that
// each call finds its operands out of cache, as a training step does (each
// GEMM runs once a micro-batch, other layers' data in between). A tight loop
// on one pair of small operands would run from cache, faster than any step.
std::int64_t operand_copies(const torch::Device& device, std::int64_t operand_bytes) {
    const std::int64_t beyond_caches =
        device.is_cuda() ? (std::int64_t{256} << 20) : (std::int64_t{128} << 20);
    return std::clamp<std::int64_t>(beyond_caches / std::max<std::int64_t>(operand_bytes, 1), 1,
                                    64);
}

std::vector<GemmSample> measure_gemms(const CalibrationOptions& o, const torch::Device& device,
                                      DType dtype, const std::vector<std::int64_t>& dims) {
    const auto options = torch::TensorOptions().device(device).dtype(measured_scalar_type(dtype));
    const std::int64_t element = dtype_bytes(dtype);
    std::vector<GemmSample> out;
    const std::size_t total = dims.size() * dims.size() * dims.size();
    for (const std::int64_t m : dims) {
        for (const std::int64_t k : dims) {
            for (const std::int64_t n : dims) {
                tell(o, "GEMM " + std::to_string(out.size() + 1) + " of " + std::to_string(total) +
                            ": " + shape_text(m, n, k));
                const std::int64_t copies = operand_copies(device, (m * k + k * n) * element);
                std::vector<torch::Tensor> a, b;
                for (std::int64_t i = 0; i < copies; ++i) {
                    a.push_back(torch::randn({m, k}, options));
                    b.push_back(torch::randn({k, n}, options));
                }
                // The product's buffer is reused, as a framework's allocator
                // hands the same block back.
                torch::Tensor c = torch::empty({m, n}, options);
                std::size_t call = 0;
                const double seconds = time_kernel(device, o.repeats, [&] {
                    const std::size_t i = call++ % a.size();
                    torch::mm_out(c, a[i], b[i]);
                });
                out.push_back({m, n, k, seconds});
            }
        }
    }
    return out;
}

std::vector<CopySample> measure_copies(const CalibrationOptions& o, const torch::Device& device,
                                       const std::vector<std::int64_t>& sizes) {
    std::vector<CopySample> out;
    for (const std::int64_t bytes : sizes) {
        tell(o, "copy of " + std::to_string(bytes >> 20) + " MiB");
        const auto options = torch::TensorOptions().device(device).dtype(torch::kUInt8);
        const torch::Tensor from = torch::ones({bytes}, options);
        torch::Tensor to = torch::empty({bytes}, options);
        out.push_back({bytes, time_kernel(device, o.repeats, [&] { to.copy_(from); })});
    }
    return out;
}

// A kernel with next to no work: what every launch costs besides its work.
double measure_launch(const CalibrationOptions& o, const torch::Device& device) {
    tell(o, "launch");
    const torch::Tensor x = torch::ones({1}, torch::TensorOptions().device(device));
    torch::Tensor y = torch::empty({1}, torch::TensorOptions().device(device));
    return time_kernel(device, o.repeats, [&] { torch::add_out(y, x, x); });
}

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

}  // namespace

std::vector<std::int64_t> default_gemm_dims(bool gpu) {
    if (gpu) {
        return {128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    }
    return {16, 64, 256, 1024, 2048};
}

std::vector<std::int64_t> default_copy_bytes(bool gpu) {
    if (gpu) {
        return {1 << 20, 16 << 20, 256 << 20, std::int64_t{1} << 30};
    }
    return {1 << 20, 16 << 20, 256 << 20};
}

std::optional<std::string> spec_for_device_name(std::string_view name) {
    std::string upper(name);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const std::string_view n = upper;
    if (n == "CPU") {
        return "cpu";
    }
    if (contains(n, "GB200")) {
        return "GB200";
    }
    if (contains(n, "B200")) {
        return "B200";
    }
    if (contains(n, "H200")) {
        return "H200";
    }
    if (contains(n, "H100")) {
        return contains(n, "PCIE") ? "H100-PCIe" : "H100-SXM";
    }
    if (contains(n, "A100")) {
        return contains(n, "80GB") ? "A100-80GB" : "A100-40GB";
    }
    if (contains(n, "MI300X")) {
        return "MI300X";
    }
    if (contains(n, "L40S")) {
        return "L40S";
    }
    if (contains(n, "V100")) {
        return "V100-32GB";
    }
    if (contains(n, "RTX 4090")) {
        return "RTX-4090";
    }
    if (contains(n, " L4") && !contains(n, " L40")) {
        return "L4";
    }
    if (contains(n, " T4")) {
        return "T4";
    }
    return std::nullopt;
}

DeviceCalibration measure_device(const CalibrationOptions& o) {
    const std::string kind = resolve_device_kind(o.device, 1);
    const torch::Device device = rank_device(kind, 0);
    const bool gpu = device.is_cuda();
    DeviceCalibration c;
    c.device_kind = kind;
    c.device_name = device_name(device);
    if (o.spec) {
        c.spec = *o.spec;
    } else if (auto spec = spec_for_device_name(c.device_name)) {
        c.spec = *spec;
    } else {
        throw BackendError("cannot tell which device of the catalog \"" + c.device_name +
                           "\" is; name it with --spec (`pipewright devices` lists them)");
    }
    c.dtype = o.dtype.value_or(gpu ? DType::bfloat16 : DType::float32);
    c.host = host_name();
    c.torch_version = TORCH_VERSION;
    c.repeats = o.repeats;
    const int previous_threads = torch::get_num_threads();
    if (!gpu) {
        c.threads = o.threads > 0
                        ? o.threads
                        : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        torch::set_num_threads(c.threads);
        c.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }
    try {
        torch::NoGradGuard no_grad;
        c.launch_seconds = measure_launch(o, device);
        c.copies = measure_copies(o, device,
                                  o.copy_bytes.empty() ? default_copy_bytes(gpu) : o.copy_bytes);
        std::vector<std::int64_t> dims = o.dims.empty() ? default_gemm_dims(gpu) : o.dims;
        std::sort(dims.begin(), dims.end());
        dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
        c.gemms = measure_gemms(o, device, c.dtype, dims);
        if (o.collectives) {
            CollectiveCalibrationOptions co;
            co.device_kind = kind;
            co.dtype = c.dtype;
            co.repeats = o.repeats;
            co.bytes = o.collective_bytes;
            co.on_progress = o.on_progress;
            MeasuredDeviceCollectives measured = measure_device_collectives(co);
            c.collectives = std::move(measured.samples);
            if (!c.collectives.empty()) {
                c.collective_library = measured.library;
            }
        }
    } catch (const c10::Error& e) {
        torch::set_num_threads(previous_threads);
        throw BackendError(std::string("a kernel failed on ") + c.device_name + ": " +
                           e.what_without_backtrace());
    }
    torch::set_num_threads(previous_threads);
    return c;
}

}  // namespace pipewright::backend
