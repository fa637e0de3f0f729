#include "pipewright/core/schedule_csv.h"

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/input_file.h"
#include "pipewright/core/printable_name.h"

namespace pipewright {

std::string overlapped_cell(const Action& forward, const Action& backward) {
    return "(" + to_string(forward) + ";" + to_string(backward) + ")OVERLAP_F_B";
}

std::string schedule_to_csv(const Schedule& schedule) {
    std::string out;
    for (const auto& actions : schedule.ranks) {
        for (std::size_t i = 0; i < actions.size(); ++i) {
            if (i > 0) {
                out += ',';
            }
            if (actions[i].overlaps_next && i + 1 < actions.size()) {
                out += overlapped_cell(actions[i], actions[i + 1]);
                ++i;
            } else {
                out += to_string(actions[i]);
            }
        }
        out += '\n';
    }
    return out;
}

namespace {

std::string_view trim(std::string_view s) {
    constexpr std::string_view kSpace = " \t\r\n\v\f";
    const auto first = s.find_first_not_of(kSpace);
    if (first == std::string_view::npos) {
        return {};
    }
    const auto last = s.find_last_not_of(kSpace);
    return s.substr(first, last - first + 1);
}

// Spreadsheets may quote cells; action names never contain commas or quotes,
// so dropping one pair of surrounding quotes is all the CSV quoting needed.
// A cell quoted in a message: a cell of megabytes is cut (its position
// says where it is), and control characters are escaped.
std::string quoted_cell(std::string_view cell) {
    constexpr std::size_t kShown = 40;
    if (cell.size() <= kShown) {
        return "\"" + printable_name(cell) + "\"";
    }
    return "\"" + printable_name(cell.substr(0, kShown)) + "…\" (" + std::to_string(cell.size()) +
           " characters)";
}

std::string_view unquote(std::string_view cell) {
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') {
        return trim(cell.substr(1, cell.size() - 2));
    }
    return cell;
}

// torch 2.x's lowered files wait for each send and gradient reduction
// explicitly ("0WAIT_SEND_F3", "1WAIT_REDUCE_GRAD"); Pipewright's runtime
// and simulator complete them implicitly, so these cells are read and dropped.
bool is_torch_wait(std::string_view cell) {
    std::size_t i = 0;
    while (i < cell.size() && cell[i] >= '0' && cell[i] <= '9') {
        ++i;
    }
    if (i == 0) {
        return false;
    }
    cell.remove_prefix(i);
    for (const std::string_view name : {"WAIT_SEND_F", "WAIT_SEND_B", "WAIT_REDUCE_GRAD"}) {
        if (cell.substr(0, name.size()) == name) {
            const std::string_view rest = cell.substr(name.size());
            return rest.find_first_not_of("0123456789") == std::string_view::npos;
        }
    }
    return false;
}

// "(0F3;5B1)OVERLAP_F_B": torch's overlapped forward and full backward.
std::optional<std::pair<Action, Action>> parse_overlapped(std::string_view cell) {
    constexpr std::string_view kSuffix = ")OVERLAP_F_B";
    if (cell.size() < kSuffix.size() + 1 || cell.front() != '(' ||
        cell.substr(cell.size() - kSuffix.size()) != kSuffix) {
        return std::nullopt;
    }
    const std::string_view inside = cell.substr(1, cell.size() - 1 - kSuffix.size());
    const auto semicolon = inside.find(';');
    if (semicolon == std::string_view::npos) {
        return std::nullopt;
    }
    auto forward = parse_action(trim(inside.substr(0, semicolon)));
    const auto backward = parse_action(trim(inside.substr(semicolon + 1)));
    if (!forward || !backward || forward->type != ActionType::forward ||
        backward->type != ActionType::backward) {
        return std::nullopt;
    }
    forward->overlaps_next = true;
    return std::pair{*forward, *backward};
}

std::string cell_path(std::size_t row, std::size_t column) {
    return "row " + std::to_string(row + 1) + ", column " + std::to_string(column + 1);
}

// Where a compute action sits; stage placement is read from these.
struct ComputeCell {
    int stage = 0;
    std::size_t row = 0;
    std::size_t column = 0;
};

std::vector<std::string_view> split_rows(std::string_view all) {
    std::vector<std::string_view> lines;
    for (std::size_t start = 0; start <= all.size();) {
        auto end = all.find('\n', start);
        if (end == std::string_view::npos) {
            end = all.size();
        }
        lines.push_back(all.substr(start, end - start));
        start = end + 1;
    }
    // A blank line between rows is a rank without actions; blank lines at the
    // end are only the file's trailing newline(s).
    while (!lines.empty() && trim(lines.back()).empty()) {
        lines.pop_back();
    }
    return lines;
}

std::string stage_range(int first, int last) {
    return first == last
               ? "stage " + std::to_string(first) + " has"
               : "stages " + std::to_string(first) + " to " + std::to_string(last) + " have";
}

// Derives stage -> rank from the compute cells. Works on the sorted cells
// rather than a table indexed by stage, so that a cell such as
// "999999999F0" costs an error message, not gigabytes.
std::vector<int> place_stages(std::vector<ComputeCell> cells, int num_stages,
                              Diagnostics& problems) {
    std::stable_sort(cells.begin(), cells.end(),
                     [](const ComputeCell& a, const ComputeCell& b) { return a.stage < b.stage; });
    std::vector<int> stage_rank;
    const auto missing = [&](int first, int last) {
        problems.add("", stage_range(first, last) +
                             " no forward or backward in any row, so the rank is unknown; "
                             "number the stages from 0 without gaps");
    };
    const auto rank_words = [](std::size_t row) {
        return "row " + std::to_string(row + 1) + " (rank " + std::to_string(row) + ")";
    };
    int next = 0;  // the stage expected next in sorted order
    bool gap = false;
    for (std::size_t begin = 0, end = 0; begin < cells.size(); begin = end) {
        const ComputeCell& first = cells[begin];
        end = begin + 1;
        bool reported = false;  // one message per stage is enough
        for (; end < cells.size() && cells[end].stage == first.stage; ++end) {
            const ComputeCell& c = cells[end];
            if (c.row != first.row && !reported) {
                reported = true;
                problems.add(cell_path(c.row, c.column),
                             "stage " + std::to_string(c.stage) + " appears in " +
                                 rank_words(c.row) + " here, but " +
                                 cell_path(first.row, first.column) + " already runs it in " +
                                 rank_words(first.row) +
                                 "; each stage runs on exactly one rank, so all its actions "
                                 "belong in one row");
            }
        }
        if (first.stage > next) {
            missing(next, first.stage - 1);
            gap = true;
        }
        next = first.stage + 1;
        stage_rank.push_back(static_cast<int>(first.row));
    }
    if (num_stages > next) {
        missing(next, num_stages - 1);
    }
    return gap ? std::vector<int>{} : stage_rank;
}

}  // namespace

Schedule schedule_from_csv(const std::string& text, const std::string& name) {
    const std::vector<std::string_view> lines = split_rows(text);
    Schedule s;
    s.name = name;
    s.ranks.resize(lines.size());
    Diagnostics problems;
    std::vector<ComputeCell> compute;
    int max_stage = -1;
    int max_microbatch = -1;
    for (std::size_t row = 0; row < lines.size(); ++row) {
        std::size_t column = 0;
        for (std::size_t start = 0; start <= lines[row].size(); ++column) {
            auto end = lines[row].find(',', start);
            if (end == std::string_view::npos) {
                end = lines[row].size();
            }
            const std::string_view cell = unquote(trim(lines[row].substr(start, end - start)));
            start = end + 1;
            if (cell.empty()) {
                continue;
            }
            if (is_torch_wait(cell)) {
                continue;
            }
            std::vector<Action> actions;
            if (cell.front() == '(') {
                const auto pair = parse_overlapped(cell);
                if (!pair) {
                    problems.add(cell_path(row, column),
                                 quoted_cell(cell) +
                                     " is not an overlapped pair; expected a forward and a "
                                     "full backward as torch writes them, e.g. "
                                     "(0F3;5B1)OVERLAP_F_B");
                    continue;
                }
                actions = {pair->first, pair->second};
            } else if (const auto action = parse_action(cell)) {
                actions = {*action};
            } else {
                problems.add(
                    cell_path(row, column),
                    quoted_cell(cell) + " is not an action; expected e.g. 2F0, 1B3, 0SEND_F1");
                continue;
            }
            for (const Action& action : actions) {
                s.ranks[row].push_back(action);
                max_stage = std::max(max_stage, action.stage);
                max_microbatch = std::max(max_microbatch, action.microbatch);
                if (is_compute(action.type)) {
                    compute.push_back({action.stage, row, column});
                }
            }
        }
    }
    if (!problems.empty()) {
        // Placement problems would mostly echo the malformed cells.
        throw InputError(std::move(problems));
    }
    if (max_stage < 0) {
        throw InputError("",
                         "the schedule CSV has no actions; expected one row per rank with "
                         "actions such as 0F0,0B0");
    }
    s.stage_rank = place_stages(std::move(compute), max_stage + 1, problems);
    if (!problems.empty()) {
        throw InputError(std::move(problems));
    }
    s.num_stages = max_stage + 1;
    s.num_microbatches = max_microbatch + 1;
    return s;
}

Schedule load_schedule_csv(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_text_file(path);
    } catch (const std::exception& e) {
        // "FILE: reason" (missing, a device, too large): the file becomes the location.
        std::string reason = e.what();
        const std::string prefix = path.string() + ": ";
        if (reason.compare(0, prefix.size(), prefix) == 0) {
            reason.erase(0, prefix.size());
        }
        throw InputError(path.string(),
                         reason + "; check that the schedule file exists and is readable");
    }
    try {
        return schedule_from_csv(text, path.stem().string());
    } catch (const InputError& e) {
        // Name the file in every location so that the message stands alone.
        Diagnostics located;
        for (const auto& d : e.diagnostics().items()) {
            located.add(d.path.empty() ? path.string() : path.string() + ", " + d.path, d.message);
        }
        throw InputError(std::move(located));
    }
}

}  // namespace pipewright
