// Schedules as data in Python: the action lists of every generator, in
// PyTorch's notation, one list per rank of the cells PyTorch's CSV holds
// ("2F0", "1SEND_B3", "(0F3;5B1)OVERLAP_F_B"), and the CSV files both ways.

#include <sstream>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "pipewright/core/diagnostics.h"
#include "pipewright/core/project_io.h"
#include "pipewright/core/schedule_csv.h"
#include "pipewright/core/schedule_generators.h"
#include "pipewright/core/torch_csv.h"

namespace py = pybind11;

namespace pipewright::python {

namespace {

using Cells = std::vector<std::vector<std::string>>;

// The cells of a CSV text: one row per rank, empty cells left out.
Cells cells_of(const std::string& csv) {
    Cells rows;
    std::istringstream lines(csv);
    std::string line;
    while (std::getline(lines, line)) {
        std::vector<std::string> row;
        std::istringstream cells(line);
        std::string cell;
        while (std::getline(cells, cell, ',')) {
            if (!cell.empty() && cell.back() == '\r') {
                cell.pop_back();
            }
            if (!cell.empty()) {
                row.push_back(cell);
            }
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

// The schedule the cells spell (a stage's rank is the row it appears in);
// ValueError naming "row R, column C" of a malformed cell.
Schedule schedule_of(const Cells& rows, const std::string& name) {
    std::string text;
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (row[c].find_first_of(",\n\r") != std::string::npos) {
                throw py::value_error("\"" + row[c] + "\" is not an action");
            }
            text += (c == 0 ? "" : ",") + row[c];
        }
        text += '\n';
    }
    try {
        return schedule_from_csv(text, name);
    } catch (const InputError& e) {
        throw py::value_error(e.diagnostics().format());
    }
}

std::optional<TorchCsvFormat> format_of(const std::optional<std::string>& name) {
    if (!name) {
        return std::nullopt;
    }
    if (auto format = torch_csv_format(*name)) {
        return format;
    }
    throw py::value_error(
        "format is \"compute-only\" or \"compute-comms\" (or None, as "
        "Pipewright runs it), not \"" +
        *name + "\"");
}

Cells generate(const std::string& name, int stages, int microbatches,
               std::optional<std::vector<int>> stage_ranks) {
    if (stages < 1 || microbatches < 1) {
        throw py::value_error("stages and microbatches must be at least 1");
    }
    std::vector<int> placement = stage_ranks.value_or(std::vector<int>{});
    if (!stage_ranks) {
        for (int s = 0; s < stages; ++s) {
            placement.push_back(s);
        }
    } else if (static_cast<int>(placement.size()) != stages) {
        throw py::value_error("stage_ranks names a rank for " + std::to_string(placement.size()) +
                              " stages, and there are " + std::to_string(stages));
    }
    if (!find_schedule(name)) {
        std::string known;
        for (const ScheduleInfo& info : schedule_catalog()) {
            known += (known.empty() ? "" : ", ") + info.name;
        }
        throw py::value_error("no schedule is called \"" + name + "\"; the schedules are " + known);
    }
    return cells_of(schedule_to_csv(generate_schedule(name, placement, microbatches)));
}

std::string to_csv(const Cells& rows, const std::optional<std::string>& format) {
    const Schedule schedule = schedule_of(rows, "python");
    if (const auto torch = format_of(format)) {
        return schedule_to_torch_csv(schedule, *torch);
    }
    return schedule_to_csv(schedule);
}

Cells from_csv(const std::string& text) {
    try {
        return cells_of(schedule_to_csv(schedule_from_csv(text)));
    } catch (const InputError& e) {
        throw py::value_error(e.diagnostics().format());
    }
}

}  // namespace

void bind_schedules(py::module_& m) {
    m.def("schedule", &generate, py::arg("name"), py::arg("stages"), py::arg("microbatches"),
          py::arg("stage_ranks") = py::none());
    m.def("schedule_to_csv", &to_csv, py::arg("actions"), py::arg("format") = py::none());
    m.def("schedule_from_csv", &from_csv, py::arg("text"));
    m.def(
        "write_text_atomically",
        [](const std::string& path, const std::string& text) {
            try {
                write_file_atomically(path, text);
            } catch (const std::exception& e) {
                PyErr_SetString(PyExc_OSError, e.what());
                throw py::error_already_set();
            }
        },
        py::arg("path"), py::arg("text"));
}

}  // namespace pipewright::python
