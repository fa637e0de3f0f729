#include "resume_check.h"

#include <gtest/gtest.h>

#include "backend_test_util.h"
#include "cli_runner.h"

namespace pipewright::test {

namespace fs = std::filesystem;

std::vector<torch::Tensor> all_saved(const fs::path& out, int stages, int replicas, int members) {
    std::vector<torch::Tensor> all;
    for (int r = 0; r < replicas; ++r) {
        for (int k = 0; k < members; ++k) {
            for (int s = 0; s < stages; ++s) {
                const auto t = saved_stage_parameters(out, s, r, k);
                all.insert(all.end(), t.begin(), t.end());
            }
        }
    }
    return all;
}

bool identical(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
    if (a.size() != b.size() || a.empty()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].sizes() != b[i].sizes() || a[i].scalar_type() != b[i].scalar_type() ||
            !torch::equal(a[i], b[i])) {
            return false;
        }
    }
    return true;
}

TwoPlusTwo two_plus_two(const fs::path& dir, const fs::path& project, int stages, int replicas,
                        int members) {
    const auto run = [&](const std::string& options, const std::string& tag) {
        const auto r =
            run_cli("run " + project.string() + " --dtype float64 --threads-per-rank 1 " + options +
                        " --out " + (dir / tag).string(),
                    dir, tag);
        EXPECT_EQ(r.code, 0) << r.output;
        return r;
    };
    TwoPlusTwo t;
    const auto whole = run("--steps 4 --save-params", "whole");
    const auto first = run("--steps 2 --checkpoint-every 2", "first");
    EXPECT_TRUE(fs::exists(dir / "first/checkpoints/step-000002/manifest.json")) << first.output;
    const auto resumed =
        run("--steps 4 --save-params --resume " + (dir / "first/checkpoints").string(), "resumed");
    t.resume_output = resumed.output;
    if (whole.code == 0 && resumed.code == 0) {
        t.uninterrupted = all_saved(dir / "whole", stages, replicas, members);
        t.resumed = all_saved(dir / "resumed", stages, replicas, members);
    }
    return t;
}

}  // namespace pipewright::test
