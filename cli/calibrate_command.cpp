#include "calibrate_command.h"

#include "option_checks.h"
#include "pipewright/core/device_catalog.h"

namespace pipewright::cli {

void add_calibrate_command(CLI::App& app, CalibrateArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "calibrate",
        "Measure this machine's device kernel by kernel (GEMMs, copies, launches) and its "
        "collectives, for simulate --calibration on any model");
    cmd->add_option("--out,-o", a.out, "Calibration file to write (default calibration.json)")
        ->check(non_empty_path());
    cmd->add_option("--device", a.device, "auto (the first GPU when there is one), cpu or cuda")
        ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    cmd->add_option("--spec", a.spec,
                    "The catalog device it calibrates (default: recognised from the device's "
                    "name; `pipewright devices` lists them)")
        ->check(CLI::IsMember(DeviceCatalog::builtin().names()));
    cmd->add_option("--dtype", a.dtype,
                    "dtype of the GEMMs: float32, float16 or bfloat16 (default bfloat16 on "
                    "GPUs, float32 on CPUs)")
        ->check(CLI::IsMember({"float32", "float16", "bfloat16"}));
    cmd->add_option("--threads", a.threads, "CPU: Torch threads (default: every core)")
        ->check(whole_number(1));
    cmd->add_option("--repeats", a.repeats, "Timed samples per kernel; medians kept (default 5)")
        ->check(whole_number(1, 1000));
    cmd->add_option("--dims", a.dims,
                    "The GEMM grid's m, n and k values, comma separated (default on GPUs "
                    "128,256,…,16384; on CPUs 16,64,256,1024,2048)")
        ->delimiter(',')
        ->check(whole_number(1, 65536));
    cmd->add_flag("--no-collectives", a.no_collectives,
                  "Leave out the collectives among the machine's devices (NCCL between every "
                  "visible GPU, Gloo between two CPU workers)");
    cmd->add_option("--collective-bytes", a.collective_bytes,
                    "Each member's buffer in the collectives, bytes, comma separated (default on "
                    "GPUs 64 KiB to 1 GiB; on CPUs 64 KiB, 1 MiB, 16 MiB)")
        ->delimiter(',')
        ->check(whole_number(64, std::int64_t{16} << 30));
    cmd->add_flag("--json", a.json, "Print the calibration as JSON instead of a summary");
}

}  // namespace pipewright::cli
