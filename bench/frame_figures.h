#pragma once

// What the studio's frame benchmarks (timeline_bench, canvas_bench) report
// of a case: the median, 90th percentile and maximum of its frame times.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

namespace pipewright::bench {

struct FrameFigures {
    double median = 0;
    double p90 = 0;
    double max = 0;
};

inline FrameFigures summarize_frames(std::vector<double> ms) {
    if (ms.empty()) {
        return {};
    }
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) {
        return ms[std::min(ms.size() - 1,
                           static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1) + 0.5))];
    };
    return {at(0.5), at(0.9), ms.back()};
}

inline double ms_since(const QElapsedTimer& timer) {
    return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

// Runs `step`, lets what it queued happen, then times one `paint` (a
// replot, a repaint), `frames` times; each frame's time in ms.
inline std::vector<double> time_frames(int frames, const std::function<void(int)>& step,
                                       const std::function<void()>& paint) {
    std::vector<double> ms;
    QElapsedTimer timer;
    for (int i = 0; i < frames; ++i) {
        step(i);
        // A step may queue a paint of its own: let it happen first, so that
        // each frame below is one paint.
        QCoreApplication::processEvents();
        timer.start();
        paint();
        ms.push_back(ms_since(timer));
    }
    return ms;
}

// One line of the table: the case's name in `width` columns, then its figures.
inline void print_frame_row(const char* name, int width, const std::vector<double>& ms) {
    const FrameFigures f = summarize_frames(ms);
    std::printf("%-*s %8.2f %8.2f %8.2f\n", width, name, f.median, f.p90, f.max);
}

}  // namespace pipewright::bench
