#pragma once

#include <QString>

namespace pipewright::gui {

// Same conventions as the command line's report, so numbers read alike in
// both front ends: "41.2 ms", "5.20 GiB", "18.3 %", "2,912".
[[nodiscard]] QString format_duration(double seconds);
[[nodiscard]] QString format_bytes(double bytes);
[[nodiscard]] QString format_percent(double fraction);
[[nodiscard]] QString format_rate(double per_second);
// Decimal magnitudes for counts: "23.5 M", "4.10 G", "512".
[[nodiscard]] QString format_count(double value);

}  // namespace pipewright::gui
