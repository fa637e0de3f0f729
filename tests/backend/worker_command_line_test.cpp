// The worker's command line: written and read in one place, losslessly.

#include "pipewright/backend/worker_command_line.h"

#include <gtest/gtest.h>

#include "pipewright/backend/backend_error.h"

namespace pipewright::backend {
namespace {

WorkerOptions every_option() {
    WorkerOptions o;
    o.settings.project = "/a folder/with spaces/project.json";
    o.settings.schedule = "interleaved-1f1b";
    o.settings.schedule_csv = "--looks-like-a-flag.csv";
    o.settings.microbatches = 8;
    o.settings.batch_size = 64;
    o.settings.data_parallel = 2;
    o.settings.tensor_parallel = 2;
    o.settings.steps = 3;
    o.settings.dtype = "float64";
    o.settings.data_dir = "/data/my images";
    o.settings.timeout_s = 0.1 + 0.2;  // not exactly 0.3: every digit must survive
    o.settings.save_params = true;
    o.settings.checkpoint_every = 4;
    o.settings.checkpoint_dir = "/runs/x/check points";
    o.settings.resume_from = "/runs/x/check points/step-000004";
    o.rank = 5;
    o.world_size = 8;
    o.master = "[::1]:29500";
    o.store_prefix = "pipewright/attempt_1";
    o.out_dir = "runs/x";
    o.threads = 3;
    o.device = "cuda";
    o.local_rank = 1;
    o.bind_cores = true;
    return o;
}

std::vector<std::string> after_worker(std::vector<std::string> args) {
    EXPECT_EQ(args.front(), "worker");
    args.erase(args.begin());
    return args;
}

TEST(WorkerCommandLine, EveryOptionRoundTrips) {
    const WorkerOptions o = every_option();
    EXPECT_EQ(parse_worker_arguments(after_worker(worker_arguments(o))), o);
}

TEST(WorkerCommandLine, TheDefaultsRoundTripWithAPrivateStore) {
    WorkerOptions o;
    o.settings.project = "p.json";
    o.out_dir = "out";
    o.store_file = "/tmp/pipewright-rendezvous-x/store";
    EXPECT_EQ(parse_worker_arguments(after_worker(worker_arguments(o))), o);
}

TEST(WorkerCommandLine, WhatTheLauncherNeverWritesIsRefused) {
    const auto error = [](std::vector<std::string> args) -> std::string {
        try {
            (void)parse_worker_arguments(args);
        } catch (const BackendError& e) {
            return e.what();
        }
        return "(accepted)";
    };
    auto args = after_worker(worker_arguments(every_option()));
    auto with = [&](std::vector<std::string> extra) {
        auto a = args;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    EXPECT_EQ(error(with({"--colour", "red"})), "worker: unknown option --colour");
    EXPECT_EQ(error(with({"--rank", "two"})), "worker: --rank needs a number, got \"two\"");
    EXPECT_EQ(error(with({"--rank"})), "worker: --rank needs a value");
    EXPECT_EQ(error(with({"second.json"})), "worker: unexpected argument \"second.json\"");
    EXPECT_EQ(error(with({"--device", "tpu"})),
              "worker: --device must be cpu or cuda, got \"tpu\"");
    EXPECT_EQ(error(with({"--store-file", "f"})),
              "worker: give exactly one of --master and --store-file");
    EXPECT_NE(error({"p.json", "--rank", "0"}).find("are required"), std::string::npos);
}

}  // namespace
}  // namespace pipewright::backend
