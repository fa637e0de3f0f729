#include "pipewright/core/quantity_format.h"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace pipewright {

namespace {

std::string with_unit(double value, const char* unit) {
    const double a = std::fabs(value);
    return format_fixed(value, a >= 100 ? 0 : a >= 10 ? 1 : 2) + " " + unit;
}

// Never print "inf", "-nan %" or "inf min" as if it were a figure: a
// non-finite result means some input was absurd, and the text says so.
std::string not_finite(double value) {
    return std::isnan(value) ? "(not a number)" : value > 0 ? "(infinite)" : "(-infinite)";
}

}  // namespace

std::string format_fixed(double value, int decimals) {
    if (!std::isfinite(value)) {
        return not_finite(value);
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string format_duration(double seconds) {
    if (!std::isfinite(seconds)) {
        return not_finite(seconds);
    }
    const double a = std::fabs(seconds);
    if (a == 0) {
        return "0 s";
    }
    if (a < 1e-6) {
        return with_unit(seconds * 1e9, "ns");
    }
    if (a < 1e-3) {
        return with_unit(seconds * 1e6, "µs");
    }
    if (a < 1) {
        return with_unit(seconds * 1e3, "ms");
    }
    if (a < 600) {
        return with_unit(seconds, "s");
    }
    return with_unit(seconds / 60, "min");
}

std::string format_bytes(double bytes) {
    if (!std::isfinite(bytes)) {
        return not_finite(bytes);
    }
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    std::size_t u = 0;
    while (std::fabs(bytes) >= 1024 && u + 1 < std::size(units)) {
        bytes /= 1024;
        ++u;
    }
    return u == 0 ? format_fixed(bytes, 0) + " B" : with_unit(bytes, units[u]);
}

std::string format_percent(double fraction) {
    if (!std::isfinite(fraction)) {
        return not_finite(fraction);
    }
    return format_fixed(fraction * 100, 1) + " %";
}

std::string format_signed_percent(double fraction) {
    return (fraction >= 0 ? "+" : "-") + format_percent(std::abs(fraction));
}

namespace {

// "-1234567" -> "-1,234,567": the digits of a whole number, grouped.
std::string group_thousands(const std::string& whole) {
    std::string grouped;
    for (std::size_t i = 0; i < whole.size(); ++i) {
        if (i > 0 && (whole.size() - i) % 3 == 0 && whole[i - 1] != '-') {
            grouped += ',';
        }
        grouped += whole[i];
    }
    return grouped;
}

}  // namespace

std::string format_rate(double per_second) {
    if (!std::isfinite(per_second)) {
        return not_finite(per_second);
    }
    const double a = std::fabs(per_second);
    std::string digits = format_fixed(per_second, a >= 100 ? 0 : a >= 10 ? 1 : 2);
    const auto dot = digits.find('.');
    const std::string grouped = group_thousands(digits.substr(0, dot));
    return dot == std::string::npos ? grouped : grouped + digits.substr(dot);
}

std::string format_grouped(long long value) {
    return group_thousands(std::to_string(value));
}

std::string format_count(double value) {
    if (!std::isfinite(value)) {
        return not_finite(value);
    }
    const double a = std::fabs(value);
    if (a >= 1e12) {
        return with_unit(value / 1e12, "T");
    }
    if (a >= 1e9) {
        return with_unit(value / 1e9, "G");
    }
    if (a >= 1e6) {
        return with_unit(value / 1e6, "M");
    }
    if (a >= 1e4) {
        return with_unit(value / 1e3, "k");
    }
    return format_fixed(value, 0);
}

}  // namespace pipewright
