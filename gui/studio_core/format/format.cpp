#include "studio_core/format/format.h"

#include "pipewright/core/quantity_format.h"

namespace pipewright::gui {

// Thin Qt wrappers: the conventions live in core so both front ends agree.
QString format_duration(double seconds) {
    return QString::fromStdString(pipewright::format_duration(seconds));
}

QString format_bytes(double bytes) {
    return QString::fromStdString(pipewright::format_bytes(bytes));
}

QString format_percent(double fraction) {
    return QString::fromStdString(pipewright::format_percent(fraction));
}

QString format_rate(double per_second) {
    return QString::fromStdString(pipewright::format_rate(per_second));
}

QString format_count(double value) {
    return QString::fromStdString(pipewright::format_count(value));
}

}  // namespace pipewright::gui
