// The text report of a cluster: thousands of links, and comparisons where
// nothing fits. The report must stay readable and say no more than it knows.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "pipewright/core/quantity_format.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using testing::example;
using testing::run_cli;
using testing::TempDir;

// DeepSeek-V3 on 2,048 H800s: 128 replicas of a 16-device pipeline, its
// links mostly the data-parallel rings' and alike.
const std::string kDeepSeek =
    (fs::path(PIPEWRIGHT_ASSETS_DIR) / ".." / "bench" / "deepseek-v3-h800-2048.json").string();

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        out.push_back(line);
    }
    return out;
}

// The rows of the link table, header left out, up to the blank line or the
// end; `after` gets the lines that follow the table.
std::vector<std::string> link_rows(const std::string& report, std::vector<std::string>* after) {
    const auto lines = lines_of(report);
    std::vector<std::string> rows;
    bool in = false;
    for (const auto& line : lines) {
        if (!in) {
            in = line.rfind("link ", 0) == 0 && line.find("transfers") != std::string::npos;
            continue;
        }
        if (line.empty()) {
            break;
        }
        if (line.rfind("… and ", 0) == 0) {
            if (after != nullptr) {
                after->push_back(line);
            }
            continue;
        }
        rows.push_back(line);
    }
    return rows;
}

// A row's link name (the text before two spaces), its count of links (1 plus
// "and N more alike") and its figures.
struct LinkRow {
    std::string name;
    std::size_t links = 1;
    std::string moved;
    std::string busy;
    int transfers = 0;
};

std::size_t parse_count(std::string digits) {
    digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
    return static_cast<std::size_t>(std::stoul(digits));
}

LinkRow parse_row(const std::string& row) {
    LinkRow r;
    const std::size_t end = row.find("  ");
    std::string name = row.substr(0, end);
    if (const auto more = name.find(" and "); more != std::string::npos) {
        const std::string tail = name.substr(more + 5);
        r.links = 1 + parse_count(tail.substr(0, tail.find(' ')));
        EXPECT_NE(tail.find(" more alike"), std::string::npos) << row;
        name = name.substr(0, more);
    }
    r.name = name;
    std::istringstream figures(row.substr(end));
    std::string number;
    std::string unit;
    figures >> number >> unit;
    r.moved = number + " " + unit;
    figures >> number >> unit;
    r.busy = number + " " + unit;
    figures >> r.transfers;
    return r;
}

std::string grouped(std::size_t n) {
    return format_grouped(static_cast<long long>(n));
}

// What makes links alike: their class (the name's last parenthesis) and
// their figures as the table prints them.
std::string alike_key(const std::string& name, const std::string& moved, const std::string& busy,
                      int transfers) {
    return name.substr(name.rfind(" (")) + "|" + moved + "|" + busy + "|" +
           std::to_string(transfers);
}

std::map<std::string, nlohmann::json> links_by_name(const nlohmann::json& report) {
    std::map<std::string, nlohmann::json> out;
    for (const auto& l : report["links"]) {
        out[l["name"].get<std::string>()] = l;
    }
    return out;
}

TEST(ReportScale, AShortLinkTableIsPrintedWhole) {
    const auto r = run_cli({"simulate", example("resnet50-2gpu-pipelined.json")});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto rows = link_rows(r.out, nullptr);
    ASSERT_EQ(rows.size(), 2U) << r.out;
    EXPECT_EQ(rows[0].rfind("node0/c0/gpu0->node0/c0/gpu1 (intra-container)  ", 0), 0U) << r.out;
    EXPECT_EQ(rows[1].rfind("node0/c0/gpu1->node0/c0/gpu0 (intra-container)  ", 0), 0U) << r.out;
    EXPECT_EQ(r.out.find("more alike"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("Links  "), std::string::npos) << r.out;
}

// 2,078 links, one row each, made a 2,150-line report; alike links now share
// a row, busiest first, and every link is counted once.
TEST(ReportScale, AClustersAlikeLinksShareARowBusiestFirst) {
    const auto r = run_cli({"simulate", kDeepSeek});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = run_cli({"simulate", kDeepSeek, "--json"});
    ASSERT_EQ(j.code, 0) << j.err;
    const auto report = nlohmann::json::parse(j.out);
    const auto by_name = links_by_name(report);
    // --json keeps every link.
    ASSERT_GT(by_name.size(), 1000U);

    EXPECT_LT(lines_of(r.out).size(), 200U) << r.out;
    const auto rows = link_rows(r.out, nullptr);
    ASSERT_FALSE(rows.empty()) << r.out;
    EXPECT_LE(rows.size(), 16U) << r.out;
    EXPECT_NE(r.out.find("Links       " + grouped(by_name.size()) + " carried data"),
              std::string::npos)
        << r.out;

    double busiest = 0;
    for (const auto& [name, l] : by_name) {
        busiest = std::max(busiest, l["busy_s"].get<double>());
    }
    std::size_t counted = 0;
    std::string previous_busy;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const LinkRow row = parse_row(rows[i]);
        ASSERT_EQ(by_name.count(row.name), 1U) << rows[i];
        const auto& l = by_name.at(row.name);
        // The row's figures are its first link's.
        EXPECT_EQ(row.moved, format_bytes(l["bytes"].get<double>())) << rows[i];
        EXPECT_EQ(row.busy, format_duration(l["busy_s"].get<double>())) << rows[i];
        EXPECT_EQ(row.transfers, l["transfers"].get<int>()) << rows[i];
        if (i == 0) {
            EXPECT_EQ(row.busy, format_duration(busiest)) << r.out;
        }
        counted += row.links;
    }
    // No link left out: here the rows hold them all.
    EXPECT_EQ(counted, by_name.size()) << r.out;
    EXPECT_EQ(r.out.find("… and "), std::string::npos) << r.out;
    // The row of the pipeline's hops between nodes: 30 of them, alike.
    EXPECT_NE(r.out.find("node0->node16 (inter-node) and 29 more alike"), std::string::npos)
        << r.out;
}

// A pipeline whose every hop moves its own bytes: only a hop's forward and
// backward links are alike, and the rows past the sixteen busiest are summed
// up in one line, exactly.
TEST(ReportScale, LinksPastTheBusiestAreSummedUp) {
    const TempDir dir;
    const int devices = 40;
    nlohmann::json gpus = nlohmann::json::array();
    nlohmann::json placement = nlohmann::json::array();
    nlohmann::json layers = nlohmann::json::array();
    int width = 64;
    for (int i = 0; i < devices; ++i) {
        const std::string layer = "l" + std::to_string(i);
        gpus.push_back({{"name", "gpu" + std::to_string(i)}, {"spec", "A100-80GB"}});
        placement.push_back({{"device", "node0/c0/gpu" + std::to_string(i)}, {"layers", {layer}}});
        layers.push_back({{"name", layer},
                          {"type", "linear"},
                          {"in_features", width},
                          {"out_features", width + 32}});
        width += 32;
    }
    const nlohmann::json project = {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", "widening"},
          {"input", {{"shape", {64}}, {"dtype", "float32"}}},
          {"loss", "mse"},
          {"layers", layers}}},
        {"topology",
         {{"nodes", {{{"name", "node0"}, {"containers", {{{"name", "c0"}, {"devices", gpus}}}}}}}}},
        {"placement", placement},
        {"training",
         {{"batch_size", 64},
          {"microbatches", 4},
          {"schedule", "gpipe"},
          {"optimizer", {{"type", "sgd"}, {"lr", 0.001}}},
          {"dtype", "float32"}}},
    };
    const std::string file = (dir / "widening.json").string();
    std::ofstream(file) << project.dump();

    const auto r = run_cli({"simulate", file});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = run_cli({"simulate", file, "--json"});
    ASSERT_EQ(j.code, 0) << j.err;
    const auto by_name = links_by_name(nlohmann::json::parse(j.out));
    // 39 hops forward, 39 back: each its own link.
    ASSERT_EQ(by_name.size(), 78U);

    std::vector<std::string> after;
    const auto rows = link_rows(r.out, &after);
    ASSERT_EQ(rows.size(), 16U) << r.out;
    std::map<std::string, std::size_t> shown;  // alike key -> links the row counts
    double last_busy = 1e300;
    for (const auto& text : rows) {
        const LinkRow row = parse_row(text);
        ASSERT_EQ(by_name.count(row.name), 1U) << text;
        const double busy = by_name.at(row.name)["busy_s"].get<double>();
        EXPECT_LE(busy, last_busy) << "not busiest first:\n" << r.out;
        last_busy = busy;
        EXPECT_EQ(row.links, 2U) << text;
        shown[alike_key(row.name, row.moved, row.busy, row.transfers)] = row.links;
    }
    std::map<std::string, std::size_t> in_shown;
    std::size_t rest = 0;
    double rest_bytes = 0;
    double rest_busiest = 0;
    int rest_transfers = 0;
    for (const auto& [name, l] : by_name) {
        const std::string key =
            alike_key(name, format_bytes(l["bytes"].get<double>()),
                      format_duration(l["busy_s"].get<double>()), l["transfers"].get<int>());
        if (shown.count(key) != 0) {
            ++in_shown[key];
            continue;
        }
        EXPECT_LE(l["busy_s"].get<double>(), last_busy) << name;
        ++rest;
        rest_bytes += l["bytes"].get<double>();
        rest_busiest = std::max(rest_busiest, l["busy_s"].get<double>());
        rest_transfers += l["transfers"].get<int>();
    }
    EXPECT_EQ(in_shown, shown);
    EXPECT_EQ(rest, 78U - 32U);
    ASSERT_EQ(after.size(), 1U) << r.out;
    EXPECT_EQ(after[0], "… and " + grouped(rest) + " more links: " + format_bytes(rest_bytes) +
                            " moved in all, in " +
                            grouped(static_cast<std::size_t>(rest_transfers)) +
                            " transfers, none busier than " + format_duration(rest_busiest))
        << r.out;
}

// DeepSeek-V3's layout: no schedule fits the H800s' 80 GiB. The baseline is
// the whole model on one H800, every expert on it (the single device drops
// the expert split as it drops the replicas): it runs, does not fit, and the
// gains are over it, where "+0.0 %" stood on every row when it did not run.
TEST(ReportScale, CompareSchedulesOfAnExpertParallelLayoutAreOverOneDevice) {
    const auto r = run_cli({"simulate", kDeepSeek, "--compare-schedules"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("+0.0 %"), std::string::npos) << r.out;
    bool baseline = false;
    for (const auto& line : lines_of(r.out)) {
        if (line.rfind("single device (H800)", 0) == 0) {
            EXPECT_NE(line.find("  NO  "), std::string::npos) << line;
            EXPECT_TRUE(line.ends_with("baseline")) << line;
            baseline = true;
        }
    }
    EXPECT_TRUE(baseline) << r.out;
    EXPECT_NE(r.out.find("which does not fit either."), std::string::npos) << r.out;

    const auto j = run_cli({"simulate", kDeepSeek, "--compare-schedules", "--json"});
    ASSERT_EQ(j.code, 0) << j.err;
    const auto rows = nlohmann::json::parse(j.out);
    for (const auto& row : rows) {
        if (row["applicable"].get<bool>()) {
            EXPECT_TRUE(row.contains("gain_percent")) << row["schedule"];
        }
    }
}

// ResNet-50 with 2,400 samples in one micro-batch: no schedule fits the two
// A100s, nor the whole model one. The gains are over the single device, and
// the report says that it does not fit either.
TEST(ReportScale, CompareSchedulesSaysWhenNothingFits) {
    const auto r = run_cli({"simulate", example("resnet50-2gpu-pipelined.json"),
                            "--compare-schedules", "-b", "2400", "-m", "1"});
    ASSERT_EQ(r.code, 0) << r.err;
    for (const auto& line : lines_of(r.out)) {
        if (line.rfind("single device", 0) == 0) {
            EXPECT_NE(line.find("  NO  "), std::string::npos) << line;
            EXPECT_TRUE(line.ends_with("baseline")) << line;
        } else if (line.find("  yes  ") != std::string::npos) {
            ADD_FAILURE() << "a row fits: " << line;
        }
    }
    EXPECT_NE(r.out.find("No schedule fits the devices' memory; the gains are over the whole "
                         "model on one device, which does not fit either."),
              std::string::npos)
        << r.out;
}

}  // namespace
}  // namespace pipewright
