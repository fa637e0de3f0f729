#include "studio_core/timeline/lane_filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace pipewright::gui {

namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool all_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A rank number; false when it does not fit an int.
bool to_rank(std::string_view text, int* out) {
    const auto result = std::from_chars(text.data(), text.data() + text.size(), *out);
    return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

}  // namespace

LaneFilter LaneFilter::parse(std::string_view text) {
    LaneFilter filter;
    std::vector<std::string> problems;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto is_separator = [](char c) {
            return c == ',' || std::isspace(static_cast<unsigned char>(c));
        };
        if (is_separator(text[i])) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && !is_separator(text[end])) {
            ++end;
        }
        const std::string_view term = text.substr(i, end - i);
        i = end;
        const auto dash = term.find('-');
        int a = 0;
        int b = 0;
        if (all_digits(term)) {
            if (!to_rank(term, &a)) {
                problems.push_back(std::string(term) + " is not a rank");
                continue;
            }
            filter.ranges_.emplace_back(a, a);
        } else if (dash != std::string_view::npos && all_digits(term.substr(0, dash)) &&
                   (dash + 1 == term.size() || all_digits(term.substr(dash + 1)))) {
            const bool open = dash + 1 == term.size();
            if (!to_rank(term.substr(0, dash), &a) ||
                (!open && !to_rank(term.substr(dash + 1), &b))) {
                problems.push_back(std::string(term) + " is not a range of ranks");
                continue;
            }
            if (open) {
                b = std::numeric_limits<int>::max();
            }
            if (b < a) {
                problems.push_back(std::string(term) + " runs backwards (write " +
                                   std::to_string(b) + "-" + std::to_string(a) + ")");
                continue;
            }
            filter.ranges_.emplace_back(a, b);
        } else {
            filter.words_.push_back(lower(term));
        }
    }
    for (std::size_t p = 0; p < problems.size(); ++p) {
        filter.error_ += (p > 0 ? "; " : "") + problems[p];
    }
    return filter;
}

bool LaneFilter::matches(int rank, std::string_view device) const {
    if (empty()) {
        return true;
    }
    for (const auto& [a, b] : ranges_) {
        if (rank >= a && rank <= b) {
            return true;
        }
    }
    if (words_.empty()) {
        return false;
    }
    const std::string path = lower(device);
    return std::any_of(words_.begin(), words_.end(), [&path](const std::string& word) {
        return path.find(word) != std::string::npos;
    });
}

}  // namespace pipewright::gui
