#pragma once

// The comma-separated cells of one line of the measured tables in bench/data/
// (no quoting there).

#include <sstream>
#include <string>
#include <vector>

inline std::vector<std::string> csv_cells(const std::string& line) {
    std::stringstream s(line);
    std::string cell;
    std::vector<std::string> cells;
    while (std::getline(s, cell, ',')) {
        cells.push_back(cell);
    }
    return cells;
}
