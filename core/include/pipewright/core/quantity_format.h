#pragma once

#include <string>

namespace pipewright {

// How quantities read in every front end (command line, studio, reports):
// "41.2 ms", "5.20 GiB", "18.3 %", "2,912", "23.5 M".
// A non-finite value reads "(infinite)" or "(not a number)", never as a figure.
[[nodiscard]] std::string format_duration(double seconds);
[[nodiscard]] std::string format_bytes(double bytes);
[[nodiscard]] std::string format_percent(double fraction);
// With its sign always written: "+20.0 %", "-60.0 %" (an error, a change).
[[nodiscard]] std::string format_signed_percent(double fraction);
[[nodiscard]] std::string format_rate(double per_second);
// A plain number with `decimals` digits after the point: "1.07", "0.869".
[[nodiscard]] std::string format_fixed(double value, int decimals);
// Decimal magnitudes for counts (FLOPs, parameters).
[[nodiscard]] std::string format_count(double value);
// A whole number with its thousands grouped: "8,030,261,248", "-1,024".
[[nodiscard]] std::string format_grouped(long long value);

}  // namespace pipewright
