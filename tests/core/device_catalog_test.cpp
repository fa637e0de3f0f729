#include "pipewright/core/device_catalog.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"

namespace pipewright {
namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::int64_t gib(double n) {
    return static_cast<std::int64_t>(n * kGiB);
}

json catalog_with(std::initializer_list<json> devices) {
    return {{"format", "pipewright-devices"}, {"version", 1}, {"devices", devices}};
}

json a_device(const std::string& name) {
    return {
        {"name", name}, {"memory_GiB", 16}, {"peak_tflops", {{"float32", 10}, {"float16", 40}}}};
}

// The diagnostics of the InputError that from_json throws.
Diagnostics rejection(const json& j) {
    try {
        (void)DeviceCatalog::from_json(j);
    } catch (const InputError& e) {
        return e.diagnostics();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not an InputError but \"" << e.what() << "\" for " << j.dump();
        return {};
    }
    ADD_FAILURE() << "no InputError for " << j.dump();
    return {};
}

::testing::AssertionResult has_path(const Diagnostics& d, const std::string& path) {
    for (const auto& item : d.items()) {
        if (item.path == path) {
            return ::testing::AssertionSuccess();
        }
    }
    return ::testing::AssertionFailure() << "no diagnostic at \"" << path << "\"; got:\n"
                                         << d.format();
}

TEST(DeviceCatalog, BuiltinHasTheDocumentedDevices) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    for (const char* name :
         {"A100-40GB", "A100-80GB", "H100-SXM", "H100-PCIe", "H800", "H200", "B200", "GB200",
          "MI300X", "V100-32GB", "L4", "L40S", "T4", "RTX-4090", "cpu"}) {
        EXPECT_NE(c.find(name), nullptr) << name;
    }
    EXPECT_EQ(c.find("A100"), nullptr);
    EXPECT_EQ(c.find("a100-80gb"), nullptr);
    EXPECT_EQ(c.names().size(), c.specs().size());
    EXPECT_EQ(c.names().front(), c.specs().front().name);
}

// What CUDA reports of an A100 80GB (79.1 GiB) less the CUDA context's
// 0.5 GiB: what the training's tensors can use.
TEST(DeviceCatalog, A100With78Point6UsableGiBAnd312TflopsBf16) {
    const DeviceSpec* a100 = DeviceCatalog::builtin().find("A100-80GB");
    ASSERT_NE(a100, nullptr);
    EXPECT_EQ(a100->memory_bytes, gib(78.6));
    EXPECT_DOUBLE_EQ(a100->flops_for(DType::bfloat16), 312e12);
    EXPECT_DOUBLE_EQ(a100->flops_for(DType::float16), 312e12);
    EXPECT_DOUBLE_EQ(a100->flops_for(DType::float32), 19.5e12);
    EXPECT_EQ(a100->kind, "gpu");
    EXPECT_FALSE(a100->description.empty());
    EXPECT_GT(a100->memory_bandwidth_GBps, 0);
}

TEST(DeviceCatalog, BuiltinMatchesTheDocumentedTable) {
    struct Row {
        const char* name;
        double memory_GiB;
        double fp32;
        double fp16;
    };
    const DeviceCatalog& c = DeviceCatalog::builtin();
    for (const Row& r :
         // Usable memory: the total CUDA reports (docs/simulator.md) less 0.5 GiB.
         {Row{"A100-40GB", 39.0, 19.5, 312}, Row{"H100-SXM", 78.6, 67, 989},
          Row{"H200", 139.3, 67, 989}, Row{"V100-32GB", 31.2, 15.7, 125},
          Row{"L4", 21.5, 30.3, 121}, Row{"T4", 14.2, 8.1, 65}, Row{"RTX-4090", 23.1, 82.6, 165.2},
          Row{"H100-PCIe", 78.6, 51, 756}, Row{"H800", 78.6, 67, 989}, Row{"B200", 177.9, 80, 2250},
          Row{"GB200", 183.8, 80, 2500}, Row{"MI300X", 191.5, 163.4, 1307.4},
          Row{"L40S", 44.0, 91.6, 362}, Row{"cpu", 64, 2, 2}}) {
        SCOPED_TRACE(r.name);
        const DeviceSpec* s = c.find(r.name);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->memory_bytes, gib(r.memory_GiB));
        EXPECT_DOUBLE_EQ(s->flops_for(DType::float32), r.fp32 * 1e12);
        EXPECT_DOUBLE_EQ(s->flops_for(DType::float16), r.fp16 * 1e12);
    }
    EXPECT_EQ(c.find("cpu")->kind, "cpu");
}

TEST(DeviceCatalog, MissingBfloat16FallsBackToFloat32) {
    for (const char* name : {"V100-32GB", "T4"}) {
        SCOPED_TRACE(name);
        const DeviceSpec* s = DeviceCatalog::builtin().find(name);
        ASSERT_NE(s, nullptr);
        EXPECT_EQ(s->peak_flops.count(DType::bfloat16), 0U);
        EXPECT_DOUBLE_EQ(s->flops_for(DType::bfloat16), s->flops_for(DType::float32));
        EXPECT_GT(s->flops_for(DType::float16), s->flops_for(DType::float32));
    }
    EXPECT_DOUBLE_EQ(DeviceCatalog::builtin().find("V100-32GB")->flops_for(DType::bfloat16),
                     15.7e12);
    EXPECT_EQ(DeviceSpec{}.flops_for(DType::float32), 0.0);
}

TEST(DeviceCatalog, BuiltinIsTheShippedAssetFile) {
    std::ifstream in(std::filesystem::path(PIPEWRIGHT_ASSETS_DIR) / "devices.json");
    ASSERT_TRUE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    const DeviceCatalog from_file = DeviceCatalog::from_json(json::parse(text.str()));
    EXPECT_EQ(from_file.specs(), DeviceCatalog::builtin().specs());
}

TEST(DeviceCatalog, FromJsonReadsFieldsAndDefaults) {
    json gpu = a_device("G");
    json cpu = a_device("C");
    cpu["kind"] = "cpu";
    cpu["description"] = "a host";
    cpu["memory_bandwidth_GBps"] = 99.5;
    json custom = a_device("K");
    custom["kernel_overhead_us"] = 12;
    custom["gemm_overhead_us"] = 20;
    const DeviceCatalog c = DeviceCatalog::from_json(catalog_with({gpu, cpu, custom}));
    EXPECT_EQ(c.names(), (std::vector<std::string>{"G", "C", "K"}));
    const DeviceSpec& g = c.specs()[0];
    EXPECT_EQ(g.kind, "gpu");
    EXPECT_EQ(g.description, "");
    EXPECT_EQ(g.memory_bytes, gib(16));
    EXPECT_EQ(g.memory_bandwidth_GBps, 0.0);
    EXPECT_DOUBLE_EQ(g.kernel_overhead_s, 3e-6);
    EXPECT_EQ(g.gemm_overhead_s, 0.0);  // GEMMs pay the launch
    EXPECT_DOUBLE_EQ(g.flops_for(DType::float16), 40e12);
    const DeviceSpec& h = c.specs()[1];
    EXPECT_EQ(h.kind, "cpu");
    EXPECT_EQ(h.description, "a host");
    EXPECT_EQ(h.memory_bandwidth_GBps, 99.5);
    EXPECT_DOUBLE_EQ(h.kernel_overhead_s, 2e-6);
    EXPECT_DOUBLE_EQ(c.specs()[2].kernel_overhead_s, 12e-6);
    EXPECT_DOUBLE_EQ(c.specs()[2].gemm_overhead_s, 20e-6);
}

TEST(DeviceCatalog, RejectsADuplicateName) {
    const Diagnostics d = rejection(catalog_with({a_device("X"), a_device("Y"), a_device("X")}));
    EXPECT_TRUE(has_path(d, "devices[2].name"));
    EXPECT_EQ(d.size(), 1U) << d.format();
    EXPECT_NE(d.items()[0].message.find("\"X\""), std::string::npos);
}

TEST(DeviceCatalog, RejectsAMissingMemory) {
    json dev = a_device("X");
    dev.erase("memory_GiB");
    EXPECT_TRUE(has_path(rejection(catalog_with({a_device("A"), dev})), "devices[1].memory_GiB"));
    dev["memory_GiB"] = "16";
    EXPECT_TRUE(has_path(rejection(catalog_with({dev})), "devices[0].memory_GiB"));
}

TEST(DeviceCatalog, RejectsANonPositivePeak) {
    for (const double bad : {0.0, -5.0}) {
        SCOPED_TRACE(bad);
        json dev = a_device("X");
        dev["peak_tflops"]["float32"] = bad;
        EXPECT_TRUE(has_path(rejection(catalog_with({dev})), "devices[0].peak_tflops.float32"));
    }
    json text = a_device("X");
    text["peak_tflops"]["float16"] = "fast";
    EXPECT_TRUE(has_path(rejection(catalog_with({text})), "devices[0].peak_tflops.float16"));
}

TEST(DeviceCatalog, RejectsAnUnknownPeakDtype) {
    json dev = a_device("X");
    dev["peak_tflops"]["float64"] = 5;
    EXPECT_TRUE(has_path(rejection(catalog_with({dev})), "devices[0].peak_tflops.float64"));
    // Token ids are not a compute precision.
    json ids = a_device("Y");
    ids["peak_tflops"]["int64"] = 5;
    EXPECT_TRUE(has_path(rejection(catalog_with({ids})), "devices[0].peak_tflops.int64"));
}

TEST(DeviceCatalog, ReportsEveryProblemAtOnce) {
    json a = a_device("A");
    a.erase("memory_GiB");
    json b = a_device("B");
    b["peak_tflops"]["float32"] = 0;
    json c = a_device("C");
    c["kernel_overhead_us"] = -1;
    json nameless = a_device("D");
    nameless.erase("name");
    json no_peaks = a_device("E");
    no_peaks.erase("peak_tflops");
    json gemm = a_device("F");
    gemm["gemm_overhead_us"] = -5;
    const Diagnostics d = rejection(catalog_with({a, b, c, nameless, no_peaks, gemm}));
    EXPECT_TRUE(has_path(d, "devices[0].memory_GiB"));
    EXPECT_TRUE(has_path(d, "devices[1].peak_tflops.float32"));
    EXPECT_TRUE(has_path(d, "devices[2].kernel_overhead_us"));
    EXPECT_TRUE(has_path(d, "devices[3].name"));
    EXPECT_TRUE(has_path(d, "devices[4].peak_tflops"));
    EXPECT_TRUE(has_path(d, "devices[5].gemm_overhead_us"));
}

TEST(DeviceCatalog, RejectsTheWrongDocument) {
    EXPECT_TRUE(has_path(
        rejection(json{{"format", "pipewright-project"}, {"devices", json::array()}}), "format"));
    EXPECT_TRUE(has_path(rejection(json::array()), "(document)"));
    EXPECT_TRUE(has_path(rejection(json{{"format", "pipewright-devices"}}), "version"));
    EXPECT_TRUE(
        has_path(rejection(json{{"format", "pipewright-devices"}, {"version", 1}}), "devices"));
}

TEST(DeviceCatalog, WrongTypedOptionalFieldIsAnInputError) {
    // Every problem in a catalog is an InputError, never a JSON library exception.
    json kind = a_device("X");
    kind["kind"] = 5;
    EXPECT_TRUE(has_path(rejection(catalog_with({kind})), "devices[0].kind"));
    json overhead = a_device("Y");
    overhead["kernel_overhead_us"] = "5";
    EXPECT_TRUE(has_path(rejection(catalog_with({overhead})), "devices[0].kernel_overhead_us"));
}

// Each fused attention kernel carries its own measured rate, as fractions
// of the 16-bit peak; FlashAttention-2 without one falls back to the
// A100's share of the matmul rate, the others have none.
TEST(DeviceCatalog, ReadsEachAttentionKernelsMeasuredRate) {
    json dev = a_device("G");
    dev["matmul_efficiency"] = 0.8;
    dev["attention_efficiency"] = {{"flash3", {{"forward", 0.62}, {"backward", 0.57}}}};
    const DeviceSpec g = DeviceCatalog::from_json(catalog_with({dev})).specs()[0];
    EXPECT_TRUE(g.measured_attention(AttentionKernel::flash3));
    EXPECT_EQ(g.attention_rate(AttentionKernel::flash3), (AttentionEfficiency{0.62, 0.57}));
    EXPECT_FALSE(g.measured_attention(AttentionKernel::flash2));
    const auto fallback = g.attention_rate(AttentionKernel::flash2);
    ASSERT_TRUE(fallback.has_value());
    EXPECT_DOUBLE_EQ(fallback->forward, 0.84 * 0.8);
    EXPECT_DOUBLE_EQ(fallback->backward, 0.60 * 0.8);
    EXPECT_FALSE(g.attention_rate(AttentionKernel::cudnn).has_value());

    json unknown = a_device("U");
    unknown["attention_efficiency"] = {{"flash4", {{"forward", 0.6}, {"backward", 0.5}}}};
    const Diagnostics u = rejection(catalog_with({unknown}));
    EXPECT_TRUE(has_path(u, "devices[0].attention_efficiency.flash4"));
    EXPECT_NE(u.format().find("expected flash2, cudnn or flash3"), std::string::npos) << u.format();
    json above = a_device("A");
    above["attention_efficiency"] = {{"cudnn", {{"forward", 1.2}, {"backward", 0.5}}}};
    EXPECT_TRUE(has_path(rejection(catalog_with({above})),
                         "devices[0].attention_efficiency.cudnn.forward"));
    json half = a_device("H");
    half["attention_efficiency"] = {{"cudnn", {{"forward", 0.5}}}};
    EXPECT_TRUE(has_path(rejection(catalog_with({half})),
                         "devices[0].attention_efficiency.cudnn.backward"));
}

// The shipped figures (docs/simulator.md): FlashAttention-2 on the A100
// (Dao 2023); the three kernels on Hopper (Shah et al. 2024, an H100 SXM5
// at head dimension 128 and 16K tokens), FlashAttention-3 the fastest and
// FlashAttention-2 at about a third of the peak.
TEST(DeviceCatalog, HopperGpusCarryEachAttentionKernelsRate) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    EXPECT_EQ(c.find("A100-80GB")->attention_rate(AttentionKernel::flash2),
              (AttentionEfficiency{0.73, 0.52}));
    EXPECT_FALSE(c.find("A100-80GB")->measured_attention(AttentionKernel::flash3));
    for (const char* name : {"H100-SXM", "H100-PCIe", "H800", "H200"}) {
        SCOPED_TRACE(name);
        const DeviceSpec& h = *c.find(name);
        EXPECT_EQ(h.attention_rate(AttentionKernel::flash2), (AttentionEfficiency{0.34, 0.33}));
        EXPECT_EQ(h.attention_rate(AttentionKernel::cudnn), (AttentionEfficiency{0.68, 0.59}));
        EXPECT_EQ(h.attention_rate(AttentionKernel::flash3), (AttentionEfficiency{0.62, 0.57}));
    }
}

// cuDNN's and FlashAttention-2's measured rates on Blackwell (NVIDIA's
// cudnn-frontend SDPA training benchmark: causal, head dimension 128, 16K
// tokens); FlashAttention-3 does not run there.
TEST(DeviceCatalog, BlackwellGpusCarryCudnnAndFlashAttention2Rates) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    const DeviceSpec& b200 = *c.find("B200");
    EXPECT_EQ(b200.attention_efficiency.at(AttentionKernel::flash2),
              (AttentionEfficiency{0.19, 0.15}));
    EXPECT_EQ(b200.attention_efficiency.at(AttentionKernel::cudnn),
              (AttentionEfficiency{0.59, 0.48}));
    const DeviceSpec& gb200 = *c.find("GB200");
    EXPECT_EQ(gb200.attention_efficiency.at(AttentionKernel::flash2),
              (AttentionEfficiency{0.17, 0.14}));
    EXPECT_EQ(gb200.attention_efficiency.at(AttentionKernel::cudnn),
              (AttentionEfficiency{0.67, 0.52}));
    for (const DeviceSpec* blackwell : {&b200, &gb200}) {
        EXPECT_FALSE(blackwell->measured_attention(AttentionKernel::flash3)) << blackwell->name;
    }
}

}  // namespace
}  // namespace pipewright

namespace pipewright {
namespace {

// What the kernel cost model needs of a device: SMs, the L2 and memory
// bandwidths, the TF32 and FP8 peaks, and the measured fractions of peak.
TEST(DeviceCatalog, ReadsWhatTheKernelModelNeeds) {
    nlohmann::json dev = {
        {"name", "G"},
        {"memory_GiB", 16},
        {"sm_count", 108},
        {"l2_bandwidth_GBps", 7219},
        {"matmul_efficiency", 0.869},
        {"memory_efficiency", 0.83},
        {"peak_tflops",
         {{"float32", 19.5}, {"tfloat32", 156}, {"bfloat16", 312}, {"float8", 624}}}};
    const DeviceCatalog c = DeviceCatalog::from_json(
        {{"format", "pipewright-devices"}, {"version", 1}, {"devices", {dev}}});
    const DeviceSpec& g = c.specs()[0];
    EXPECT_EQ(g.sm_count, 108);
    EXPECT_EQ(g.l2_bandwidth_GBps, 7219);
    EXPECT_DOUBLE_EQ(g.matmul_efficiency, 0.869);
    EXPECT_DOUBLE_EQ(g.memory_efficiency, 0.83);
    EXPECT_DOUBLE_EQ(g.tf32_flops, 156e12);
    EXPECT_DOUBLE_EQ(g.fp8_flops, 624e12);
    EXPECT_DOUBLE_EQ(g.matmul_flops_for(DType::float32, true), 156e12);
    EXPECT_DOUBLE_EQ(g.matmul_flops_for(DType::float32, false), 19.5e12);
    EXPECT_DOUBLE_EQ(g.matmul_flops_for(DType::bfloat16, true), 312e12);
    // Not given: no wave quantization, no L2 limit, the documented fractions.
    nlohmann::json plain = {{"name", "P"}, {"memory_GiB", 16}, {"peak_tflops", {{"float32", 10}}}};
    const DeviceSpec p =
        DeviceCatalog::from_json(
            {{"format", "pipewright-devices"}, {"version", 1}, {"devices", {plain}}})
            .specs()[0];
    EXPECT_EQ(p.sm_count, 0);
    EXPECT_EQ(p.l2_bandwidth_GBps, 0);
    EXPECT_EQ(p.matmul_efficiency, kDefaultMatmulEfficiency);
    EXPECT_EQ(p.memory_efficiency, kDefaultMemoryEfficiency);
    EXPECT_EQ(p.matmul_flops_for(DType::float32, true), 10e12);
    // A fraction of peak above 1 is refused where it is.
    dev["matmul_efficiency"] = 1.5;
    try {
        (void)DeviceCatalog::from_json(
            {{"format", "pipewright-devices"}, {"version", 1}, {"devices", {dev}}});
        ADD_FAILURE() << "accepted a matmul efficiency of 1.5";
    } catch (const InputError& e) {
        EXPECT_NE(e.diagnostics().format().find("devices[0].matmul_efficiency"), std::string::npos)
            << e.diagnostics().format();
    }
}

// Every GPU of the shipped catalog carries the figures the kernel model
// prices with (docs/simulator.md cites each).
TEST(DeviceCatalog, EveryBuiltinGpuHasItsSmsAndBandwidth) {
    for (const DeviceSpec& d : DeviceCatalog::builtin().specs()) {
        if (d.kind != "gpu") {
            continue;
        }
        SCOPED_TRACE(d.name);
        EXPECT_GT(d.sm_count, 0);
        EXPECT_GT(d.memory_bandwidth_GBps, 0);
        EXPECT_GT(d.matmul_efficiency, 0.5);  // MI300X 0.514 is the lowest
        EXPECT_LE(d.matmul_efficiency, 1);
        EXPECT_GT(d.memory_efficiency, 0.5);
        EXPECT_DOUBLE_EQ(d.kernel_overhead_s, 3e-6);
    }
    EXPECT_EQ(DeviceCatalog::builtin().find("A100-80GB")->sm_count, 108);
    EXPECT_DOUBLE_EQ(DeviceCatalog::builtin().find("H100-SXM")->fp8_flops, 1979e12);
}

// XLA's measured GEMM table times a 256³ GEMM at 4.99 µs on an H100 and
// 4.96 µs on a B200 (docs/simulator.md): the Hopper and Blackwell chips'
// GEMMs cost 5 µs at least; the devices nothing measured keep the launch.
TEST(DeviceCatalog, HopperAndBlackwellGemmsCostTheSmallestMeasuredGemmsTime) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    for (const char* name : {"H100-SXM", "H100-PCIe", "H800", "H200", "B200", "GB200"}) {
        SCOPED_TRACE(name);
        EXPECT_DOUBLE_EQ(c.find(name)->gemm_overhead_s, 5e-6);
    }
    for (const char* name : {"A100-80GB", "V100-32GB", "MI300X", "cpu"}) {
        SCOPED_TRACE(name);
        EXPECT_EQ(c.find(name)->gemm_overhead_s, 0.0);
    }
}

// TransformerEngine's docs: Hopper and Ada read an FP8 operand in one layout
// only, so the backward's column-wise reads need a transposed copy;
// Blackwell reads one layout both ways.
TEST(DeviceCatalog, HopperAndAdaWriteTransposedFp8CopiesAndBlackwellDoesNot) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    for (const char* name : {"H100-SXM", "H100-PCIe", "H800", "H200", "L4", "L40S", "RTX-4090"}) {
        SCOPED_TRACE(name);
        EXPECT_TRUE(c.find(name)->fp8_transposed_copies);
        EXPECT_GT(c.find(name)->fp8_flops, 0);
    }
    for (const char* name : {"B200", "GB200", "MI300X", "A100-80GB"}) {
        SCOPED_TRACE(name);
        EXPECT_FALSE(c.find(name)->fp8_transposed_copies);
    }
    json custom = a_device("K");
    custom["fp8_transposed_copies"] = true;
    EXPECT_TRUE(DeviceCatalog::from_json(catalog_with({custom})).specs()[0].fp8_transposed_copies);
    json wrong = a_device("W");
    wrong["fp8_transposed_copies"] = "yes";
    EXPECT_TRUE(has_path(rejection(catalog_with({wrong})), "devices[0].fp8_transposed_copies"));
}

// Hopper and Blackwell run GEMM tiles in clusters whose SMs share one
// operand through the TMA's multicast; Ampere and older have no TMA.
TEST(DeviceCatalog, HopperAndBlackwellShareTilesThroughTmaMulticast) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    for (const char* name : {"H100-SXM", "H100-PCIe", "H800", "H200", "B200", "GB200"}) {
        SCOPED_TRACE(name);
        EXPECT_TRUE(c.find(name)->tma_multicast);
    }
    for (const char* name : {"A100-80GB", "A100-40GB", "V100-32GB", "MI300X", "cpu"}) {
        SCOPED_TRACE(name);
        EXPECT_FALSE(c.find(name)->tma_multicast);
    }
    json custom = a_device("K");
    custom["tma_multicast"] = true;
    EXPECT_TRUE(DeviceCatalog::from_json(catalog_with({custom})).specs()[0].tma_multicast);
    json wrong = a_device("W");
    wrong["tma_multicast"] = 1;
    EXPECT_TRUE(has_path(rejection(catalog_with({wrong})), "devices[0].tma_multicast"));
}

// The measured large-GEMM rate over the dense BF16 peak ("Maximum Achievable
// Matmul FLOPS", stas00/ml-engineering): B200 1,745 of 2,250, GB200 1,822 of
// 2,500, MI300X 668.4 of 1,300 (TunableOp on).
TEST(DeviceCatalog, TodaysGpusCarryTheirMeasuredMatmulCeilingsAndFp8) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    EXPECT_DOUBLE_EQ(c.find("B200")->matmul_efficiency, 0.776);
    EXPECT_DOUBLE_EQ(c.find("GB200")->matmul_efficiency, 0.729);
    EXPECT_DOUBLE_EQ(c.find("MI300X")->matmul_efficiency, 0.514);
    EXPECT_DOUBLE_EQ(c.find("H100-PCIe")->matmul_efficiency, kDefaultMatmulEfficiency);
    for (const auto& [name, fp8] : {std::pair{"H100-PCIe", 1513.0},
                                    {"B200", 4500.0},
                                    {"GB200", 5000.0},
                                    {"MI300X", 2614.9},
                                    {"L40S", 733.0}}) {
        SCOPED_TRACE(name);
        EXPECT_DOUBLE_EQ(c.find(name)->fp8_flops, fp8 * 1e12);
    }
}

}  // namespace
}  // namespace pipewright
