#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/sim/schedule_comparison.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

// "41.2 ms", "3.05 s", "820 µs"
[[nodiscard]] std::string format_duration(double seconds);
// "5.2 GiB", "512 KiB"
[[nodiscard]] std::string format_bytes(double bytes);
// "18.3 %"
[[nodiscard]] std::string format_percent(double fraction);
// "2,912.4"
[[nodiscard]] std::string format_rate(double per_second);

// Left-aligned text table with a header row; columns padded to fit.
class TextTable {
  public:
    explicit TextTable(std::vector<std::string> header);
    void add_row(std::vector<std::string> row);
    void right_align(std::size_t column);
    void print(std::ostream& out, const std::string& indent = "") const;

  private:
    std::vector<std::vector<std::string>> rows_;
    std::vector<bool> right_;
};

void print_report(std::ostream& out, const SimulationReport& report,
                  const std::string& project_name);
[[nodiscard]] nlohmann::json report_to_json(const SimulationReport& report);

void print_comparison(std::ostream& out, const std::vector<ComparisonRow>& rows);
[[nodiscard]] nlohmann::json comparison_to_json(const std::vector<ComparisonRow>& rows);

}  // namespace pipewright::cli
