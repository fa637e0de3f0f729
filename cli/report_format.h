#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipewright/core/quantity_format.h"
#include "pipewright/sim/schedule_comparison.h"
#include "pipewright/sim/simulation.h"

namespace pipewright::cli {

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

// "block0 … block11", or the one layer's name, of the model's layers first
// to last (inclusive), printable.
[[nodiscard]] std::string layer_range(const Model& model, int first, int last);

// The iteration of back-to-back iterations whose optimizer step is validated
// after the fact (the zero-bubble paper's assumption): the longest span of
// one device's work, first action to last.
[[nodiscard]] double steady_state_s(const SimulationReport& report);

// `cost_sources`: where the costs came from when a profile is used
// (check_profile_fit), shown as a "Costs" line. `memory_margin_bytes`: what
// --memory-margin keeps free on each GPU (0: none), said on the Memory line.
void print_report(std::ostream& out, const SimulationReport& report,
                  const std::string& project_name, const std::string& cost_sources = {},
                  std::int64_t memory_margin_bytes = 0);
[[nodiscard]] nlohmann::json report_to_json(const SimulationReport& report);

// `what` names the first column and each row's JSON key: "schedule" or "layout".
// Without a baseline that ran (has_gains), every gain reads "—" and the JSON
// rows have no gain_percent.
void print_comparison(std::ostream& out, const std::vector<ComparisonRow>& rows,
                      const std::string& what = "schedule");
[[nodiscard]] nlohmann::json comparison_to_json(const std::vector<ComparisonRow>& rows,
                                                const std::string& what = "schedule");

}  // namespace pipewright::cli
