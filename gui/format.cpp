#include "format.h"

#include <QLocale>
#include <cmath>

namespace pipewright::gui {

namespace {

QString with_unit(double value, const char* unit) {
    const double a = std::fabs(value);
    return QString::number(value, 'f',
                           a >= 100  ? 0
                           : a >= 10 ? 1
                                     : 2) +
           QChar(' ') + QString::fromUtf8(unit);
}

}  // namespace

QString format_duration(double seconds) {
    const double a = std::fabs(seconds);
    if (a == 0) {
        return QStringLiteral("0 s");
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

QString format_bytes(double bytes) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    std::size_t u = 0;
    while (std::fabs(bytes) >= 1024 && u + 1 < std::size(units)) {
        bytes /= 1024;
        ++u;
    }
    return u == 0 ? QString::number(bytes, 'f', 0) + QStringLiteral(" B")
                  : with_unit(bytes, units[u]);
}

QString format_percent(double fraction) {
    return QString::number(fraction * 100, 'f', 1) + QStringLiteral(" %");
}

QString format_rate(double per_second) {
    const double a = std::fabs(per_second);
    // The C locale groups with commas whatever the user's locale is, matching
    // the command line's output.
    QLocale c(QLocale::C);
    c.setNumberOptions(QLocale::DefaultNumberOptions);
    return c.toString(per_second, 'f', a >= 100 ? 0 : a >= 10 ? 1 : 2);
}

QString format_count(double value) {
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
    return QString::number(value, 'f', 0);
}

}  // namespace pipewright::gui
