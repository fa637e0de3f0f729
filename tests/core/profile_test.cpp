// A measured profile is untrusted input like a project (issue 18): the same
// ranges apply, and every problem is named by its JSON path in the words of
// every other Pipewright file (json_reader.h).
#include "pipewright/core/profile.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/timeline.h"

namespace pipewright {
namespace {

Profile small_profile() {
    Profile p;
    p.microbatch_size = 1;
    p.layers = {{"net0", 1.0, 0.5, 0.5, std::nullopt, std::nullopt, std::nullopt}};
    p.transfer = LinkSpec{10.0, 5.0};
    return p;
}

// Every diagnostic of profile_from_json(j), or "" when it is accepted.
std::string problems_of(const nlohmann::json& j) {
    try {
        (void)profile_from_json(j);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::filesystem::path temp_file(const std::string& name) {
    return std::filesystem::temp_directory_path() /
           ("pw-profile-" + std::to_string(::getpid()) + "-" + name);
}

TEST(Profile, RoundTripsEveryField) {
    Profile p = small_profile();
    p.device_kind = "cpu";
    p.device_name = "CPU, 1 thread";
    p.layers.push_back({"relu", 0.25, 0.125, 0, 4096, 0.5, 0.0});
    // What was measured: parameters and the output per sample.
    p.layers.back().parameters = 0;
    p.layers.back().output_shape = std::vector<std::int64_t>{8, 16};
    p.layers.front().parameters = 1056;
    p.transfer_samples = {{4096, 6e-5}, {1 << 20, 1e-3}};
    p.ready_receive_us = 18.5;
    p.machine = {"builder", 2, 1, 10, "gloo", "1.13.1", 2};
    p.all_reduce = CollectiveProfile{{1.5, 20}, {{65536, 1e-4}, {1 << 20, 8e-4}}};
    p.all_gather = CollectiveProfile{{0.75, 30}, {{65536, 2e-4}, {1 << 20, 9e-4}}};
    EXPECT_EQ(profile_from_json(profile_to_json(p)), p);
    // A profile without collectives (older ones) reads as none.
    p.all_reduce.reset();
    p.all_gather.reset();
    EXPECT_FALSE(profile_to_json(p).contains("collectives"));
    EXPECT_EQ(profile_from_json(profile_to_json(p)), p);
    // Nor one without a ready receive's time.
    p.ready_receive_us.reset();
    EXPECT_FALSE(profile_to_json(p)["transfer"].contains("ready_receive_us"));
    EXPECT_EQ(profile_from_json(profile_to_json(p)), p);
}

TEST(Profile, AReadyReceivesTimeIsATransfersAndNotNegative) {
    nlohmann::json j = profile_to_json(small_profile());
    j["transfer"]["ready_receive_us"] = -1;
    EXPECT_TRUE(contains(problems_of(j), "transfer.ready_receive_us")) << problems_of(j);
    // Only the transfer's fit carries it, not a collective's.
    j["transfer"]["ready_receive_us"] = 20;
    EXPECT_EQ(problems_of(j), "");
    j["collectives"]["all_reduce"] = {
        {"bandwidth_GBps", 2}, {"latency_us", 30}, {"ready_receive_us", 20}};
    EXPECT_TRUE(contains(problems_of(j), "collectives.all_reduce.ready_receive_us"))
        << problems_of(j);
}

// A profile measured at 4 samples (its own size) and at 1 and 16.
Profile sized_profile() {
    Profile p = small_profile();
    p.microbatch_size = 4;
    LayerProfile& l = p.layers.front();
    l.forward_ms = 2.0;
    l.backward_input_ms = 1.0;
    l.backward_weight_ms = 1.0;
    l.backward_ms = 2.5;
    l.other_sizes = {{1, 1.4, 0.6, 0.7, 1.5}, {16, 5.0, 2.5, 2.5, 6.0}};
    return p;
}

TEST(Profile, TimesAtOtherSizesRoundTrip) {
    const Profile p = sized_profile();
    EXPECT_EQ(profile_from_json(profile_to_json(p)), p);
    EXPECT_EQ(p.measured_sizes(), (std::vector<int>{1, 4, 16}));
    // Without other sizes the file has no such field, as older profiles.
    EXPECT_FALSE(profile_to_json(small_profile())["layers"][0].contains("other_sizes"));
}

TEST(Profile, OtherSizesMustAscendAndDifferFromTheProfilesOwn) {
    nlohmann::json j = profile_to_json(sized_profile());
    std::swap(j["layers"][0]["other_sizes"][0], j["layers"][0]["other_sizes"][1]);
    EXPECT_TRUE(contains(problems_of(j), "layers[0].other_sizes[1].microbatch_size"))
        << problems_of(j);
    j = profile_to_json(sized_profile());
    j["layers"][0]["other_sizes"][0]["microbatch_size"] = 4;
    EXPECT_TRUE(contains(problems_of(j), "profile's microbatch_size (4)")) << problems_of(j);
    j = profile_to_json(sized_profile());
    j["layers"][0]["other_sizes"][0]["forward_ms"] = -1;
    EXPECT_TRUE(contains(problems_of(j), "layers[0].other_sizes[0].forward_ms")) << problems_of(j);
}

TEST(Profile, TimesBetweenMeasuredSizesAreInterpolated) {
    const Profile p = sized_profile();
    const LayerProfile& l = p.layers.front();
    // Measured sizes read back exactly.
    EXPECT_DOUBLE_EQ(layer_times_at(p, l, 1).forward_ms, 1.4);
    EXPECT_DOUBLE_EQ(layer_times_at(p, l, 4).forward_ms, 2.0);
    EXPECT_DOUBLE_EQ(layer_times_at(p, l, 16).backward_ms.value(), 6.0);
    // On the line between the two nearest: 2 + (5 - 2) * (8 - 4) / 12.
    EXPECT_DOUBLE_EQ(layer_times_at(p, l, 8).forward_ms, 3.0);
    EXPECT_DOUBLE_EQ(layer_times_at(p, l, 2).forward_ms, 1.6);
    EXPECT_NEAR(layer_times_at(p, l, 2).backward_input_ms, 0.6 + 0.4 / 3, 1e-12);
}

TEST(Profile, TimesBeyondMeasuredSizesFollowTheNearestTwoWithinBounds) {
    const Profile p = sized_profile();
    const LayerProfile& l = p.layers.front();
    // Above: the line through 4 and 16 (0.25 ms a sample) from 16.
    EXPECT_DOUBLE_EQ(layer_times_at(p, l, 32).forward_ms, 9.0);
    // The weight gradient's line (1 at 4, 2.5 at 16) reaches 8.5 at 64,
    // below proportional scaling of 16's (10).
    EXPECT_DOUBLE_EQ(layer_times_at(p, l, 64).backward_weight_ms, 8.5);
    Profile steep = p;
    // Superlinear growth is held to proportional scaling: 50 * 32 / 16.
    steep.layers.front().other_sizes.back().forward_ms = 50;
    EXPECT_DOUBLE_EQ(layer_times_at(steep, steep.layers.front(), 32).forward_ms, 100);

    // Below the smallest: between proportional and the smallest itself.
    Profile from_four = small_profile();
    from_four.microbatch_size = 4;
    from_four.layers.front().forward_ms = 2.0;
    from_four.layers.front().other_sizes = {{16, 5.0, 2.5, 2.5, std::nullopt}};
    // The line through 4 and 16 gives 1.25 at 1, above proportional (0.5).
    EXPECT_DOUBLE_EQ(layer_times_at(from_four, from_four.layers.front(), 1).forward_ms, 1.25);
    from_four.layers.front().other_sizes.front().forward_ms = 20;  // line below 0: proportional
    EXPECT_DOUBLE_EQ(layer_times_at(from_four, from_four.layers.front(), 1).forward_ms, 0.5);
    // A whole backward only where every size has one.
    EXPECT_FALSE(layer_times_at(from_four, from_four.layers.front(), 8).backward_ms.has_value());
}

TEST(Profile, DefaultSizesReachFromOneToThePipelinesBatch) {
    EXPECT_EQ(default_profile_sizes(8, 32), (std::vector<int>{1, 4, 8, 32}));
    EXPECT_EQ(default_profile_sizes(16, 64), (std::vector<int>{1, 4, 16, 64}));
    EXPECT_EQ(default_profile_sizes(2, 512), (std::vector<int>{1, 2, 8, 32, 128, 512}));
    EXPECT_EQ(default_profile_sizes(64, 64), (std::vector<int>{1, 4, 16, 64}));
    EXPECT_EQ(default_profile_sizes(1, 1), (std::vector<int>{1}));
}

TEST(Profile, OneMeasuredSizeScalesProportionally) {
    Profile p = small_profile();
    p.microbatch_size = 8;
    EXPECT_DOUBLE_EQ(layer_times_at(p, p.layers.front(), 2).forward_ms, 0.25);
    EXPECT_DOUBLE_EQ(layer_times_at(p, p.layers.front(), 16).backward_input_ms, 1.0);
}

TEST(Profile, CollectivesAreCheckedAsTransfersAre) {
    Profile p = small_profile();
    p.all_reduce = CollectiveProfile{{1.5, 20}, {}};
    nlohmann::json j = profile_to_json(p);
    j["collectives"]["all_reduce"]["latency_us"] = -3;
    EXPECT_TRUE(
        contains(problems_of(j), "collectives.all_reduce.latency_us: must be a number from 0"))
        << problems_of(j);
    j = profile_to_json(p);
    j["collectives"]["broadcast"] = nlohmann::json::object();
    EXPECT_TRUE(contains(problems_of(j), "collectives.broadcast")) << problems_of(j);
}

TEST(Profile, ActivationBytesThatWouldWrapAreRefused) {
    // 2^59 bytes wrapped to 4.5 MiB and "every device fits"; the same value
    // in a project is refused, and here too.
    nlohmann::json j = profile_to_json(small_profile());
    j["layers"][0]["activation_bytes"] = std::int64_t{1} << 59;
    const std::string message = problems_of(j);
    EXPECT_TRUE(contains(message,
                         "layers[0].activation_bytes: must be at most 1000000000000, got "
                         "576460752303423488"))
        << message;
}

TEST(Profile, TransferAndTimesOutsideTheRangesAreRefused) {
    nlohmann::json j = profile_to_json(small_profile());
    j["transfer"]["bandwidth_GBps"] = 5e-324;
    EXPECT_TRUE(contains(problems_of(j),
                         "transfer.bandwidth_GBps: must be a number from 0.001 to 1000000, got"))
        << problems_of(j);
    j = profile_to_json(small_profile());
    j["layers"][0]["forward_ms"] = -1;
    EXPECT_EQ(problems_of(j),
              "layers[0].forward_ms: must be a number from 0 to 1000000000, got -1");
    j = profile_to_json(small_profile());
    j["microbatch_size"] = std::int64_t{1} << 40;
    EXPECT_EQ(problems_of(j), "microbatch_size: must be at most 2147483647, got 1099511627776");
}

TEST(Profile, WrongTypesAreNamedWithTheirPathAndType) {
    nlohmann::json j = profile_to_json(small_profile());
    j["layers"][0]["name"] = 7;
    j["layers"][0].erase("backward_input_ms");
    j["transfer"]["samples"] = nlohmann::json::array({{{"bytes", "many"}, {"seconds", 1}}});
    j["machine"] = {{"cores", 2.5}};
    EXPECT_EQ(problems_of(j),
              "layers[0].name: expected a string, got the number 7\n"
              "layers[0].backward_input_ms: missing (a number is required)\n"
              "transfer.samples[0].bytes: expected a number, got the string \"many\"\n"
              "machine.cores: expected a whole number, got the number 2.5");
}

TEST(Profile, UnknownFieldsAreTyposNotIgnored) {
    nlohmann::json j = profile_to_json(small_profile());
    j["layers"][0]["backwards_ms"] = 1;
    EXPECT_TRUE(
        contains(problems_of(j), "layers[0].backwards_ms: unknown field (expected one of: "))
        << problems_of(j);
}

TEST(Profile, AnotherKindOfFileIsNamedAsSuch) {
    Timeline t;
    t.devices = {"node0/gpu0"};
    EXPECT_EQ(problems_of(timeline_to_json(t)),
              "format: must be \"pipewright-profile\", got \"pipewright-timeline\"");
    EXPECT_EQ(problems_of(nlohmann::json::array({1, 2})),
              "(document): expected a JSON object, got an array [1,2]");
    EXPECT_TRUE(contains(problems_of(nlohmann::json{{"layers", nlohmann::json::array()}}),
                         "format: missing: not a pipewright-profile file"));
    nlohmann::json newer = profile_to_json(small_profile());
    newer["version"] = 2;
    EXPECT_EQ(problems_of(newer),
              "version: this Pipewright reads version 1 of pipewright-profile, got version 2");
}

TEST(Profile, DuplicateKeysAndDeepNestingInAProfileFileAreRefused) {
    const auto file = temp_file("twice.json");
    std::string text = profile_to_json(small_profile()).dump();
    text.insert(text.rfind('}'), ",\"microbatch_size\": 4");
    std::ofstream(file) << text;
    try {
        (void)load_profile_file(file);
        ADD_FAILURE() << "a duplicated key was accepted";
    } catch (const InputError& e) {
        EXPECT_TRUE(contains(e.what(), "microbatch_size: appears twice")) << e.what();
    }
    std::ofstream(file) << std::string(60'000, '[') << std::string(60'000, ']');
    try {
        (void)load_profile_file(file);
        ADD_FAILURE() << "60,000 levels were accepted";
    } catch (const InputError& e) {
        EXPECT_TRUE(contains(e.what(), "nested deeper than 64 levels")) << e.what();
    }
    std::filesystem::remove(file);
}

}  // namespace
}  // namespace pipewright
