#include "pipewright/core/measured_collectives.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace pipewright {

std::string_view to_string(CollectiveKind k) {
    switch (k) {
        case CollectiveKind::all_reduce:
            return "all-reduce";
        case CollectiveKind::reduce_scatter:
            return "reduce-scatter";
        case CollectiveKind::all_gather:
            return "all-gather";
        case CollectiveKind::all_to_all:
            return "all-to-all";
    }
    return "?";
}

double bus_traffic_share(CollectiveKind kind, int members) {
    const double ring = members > 1 ? static_cast<double>(members - 1) / members : 0.0;
    return kind == CollectiveKind::all_reduce ? 2 * ring : ring;
}

MeasuredCollectives::MeasuredCollectives(std::vector<CollectiveSample> samples)
    : samples_(std::move(samples)) {
    std::sort(
        samples_.begin(), samples_.end(), [](const CollectiveSample& a, const CollectiveSample& b) {
            return std::tie(a.kind, a.members, a.bytes) < std::tie(b.kind, b.members, b.bytes);
        });
    for (const CollectiveSample& s : samples_) {
        largest_ = std::max(largest_, s.members);
    }
}

std::optional<double> MeasuredCollectives::seconds(CollectiveKind kind, int members,
                                                   double bytes) const {
    if (members < 2) {
        return 0.0;
    }
    // The smallest measured group of this kind with at least `members`.
    int group = 0;
    for (const CollectiveSample& s : samples_) {
        if (s.kind == kind && s.members >= members && (group == 0 || s.members < group)) {
            group = s.members;
        }
    }
    if (group == 0) {
        return std::nullopt;
    }
    const auto first = std::find_if(samples_.begin(), samples_.end(), [&](const auto& s) {
        return s.kind == kind && s.members == group;
    });
    const auto last = std::find_if(
        first, samples_.end(), [&](const auto& s) { return s.kind != kind || s.members != group; });
    double t = 0;
    if (bytes <= static_cast<double>(first->bytes)) {
        t = first->seconds;
    } else if (bytes >= static_cast<double>((last - 1)->bytes)) {
        const CollectiveSample& top = *(last - 1);
        t = top.seconds * bytes / static_cast<double>(top.bytes);
    } else {
        const auto above = std::find_if(
            first, last, [&](const auto& s) { return static_cast<double>(s.bytes) >= bytes; });
        const CollectiveSample& lo = *(above - 1);
        const CollectiveSample& hi = *above;
        const double x = std::log(bytes / static_cast<double>(lo.bytes)) /
                         std::log(static_cast<double>(hi.bytes) / static_cast<double>(lo.bytes));
        t = std::exp(std::log(lo.seconds) + x * (std::log(hi.seconds) - std::log(lo.seconds)));
    }
    return t * bus_traffic_share(kind, members) / bus_traffic_share(kind, group);
}

}  // namespace pipewright
