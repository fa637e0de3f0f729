// Frame times of the studio's timeline while zooming, panning and scrolling
// (bench/README.md, "Timeline frame times"). Not a test: it prints figures.
//
//   timeline_bench PROJECT [--size WxH] [--frames N] [--expanded] [--png FILE]
//
// Simulates PROJECT, shows its timeline in a window of the given size (Qt's
// offscreen platform unless QT_QPA_PLATFORM says otherwise) and times each
// frame: the replot and the events it causes (the overview's repaint).
// --expanded opens every group first; --png saves the window before timing.
// The same source builds against older trees without the lane view (it then
// times the plot alone, without lane scrolling), for side-by-side figures.
#include <QApplication>
#include <QElapsedTimer>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "frame_figures.h"
#include "pipewright/core/project_io.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#if __has_include("timeline/timeline_view.h")
#include "timeline/timeline_view.h"
#define PIPEWRIGHT_HAVE_LANE_VIEW 1
#endif

namespace {

using pipewright::bench::ms_since;

using pipewright::gui::TimelinePlot;

// Each frame one replot, and what it queues.
std::vector<double> time_frames(TimelinePlot* plot, int frames,
                                const std::function<void(int)>& step) {
    return pipewright::bench::time_frames(frames, step, [plot] {
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QCoreApplication::processEvents();
    });
}

void report(const char* name, const std::vector<double>& ms) {
    pipewright::bench::print_frame_row(name, 24, ms);
}

}  // namespace

int main(int argc, char* argv[]) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    std::string project_path;
    int width = 1600;
    int height = 1000;
    int frames = 60;
    bool expanded = false;
    QString png;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--size" && i + 1 < argc) {
            if (std::sscanf(argv[++i], "%dx%d", &width, &height) != 2) {
                std::fprintf(stderr, "timeline_bench: --size wants WxH\n");
                return 2;
            }
        } else if (arg == "--frames" && i + 1 < argc) {
            frames = std::max(5, std::atoi(argv[++i]));
        } else if (arg == "--png" && i + 1 < argc) {
            png = QString::fromLocal8Bit(argv[++i]);
        } else if (arg == "--expanded") {
            expanded = true;
        } else if (arg == "--help" || arg == "-h") {
            std::printf(
                "usage: timeline_bench PROJECT [--size WxH] [--frames N] [--expanded] [--png "
                "FILE]\n");
            return 0;
        } else {
            project_path = arg;
        }
    }
    if (project_path.empty()) {
        std::fprintf(
            stderr,
            "usage: timeline_bench PROJECT [--size WxH] [--frames N] [--expanded] [--png FILE]\n");
        return 2;
    }
    const auto loaded = pipewright::load_project_file(project_path);
    if (!loaded.project) {
        std::fprintf(stderr, "timeline_bench: cannot read %s\n", project_path.c_str());
        return 1;
    }
    const auto result = pipewright::gui::simulate_now(*loaded.project, ".");
    if (!result.report) {
        std::fprintf(stderr, "timeline_bench: %s does not simulate\n", project_path.c_str());
        return 1;
    }
    const pipewright::Timeline& timeline = result.report->timeline;

#ifdef PIPEWRIGHT_HAVE_LANE_VIEW
    pipewright::gui::TimelineView view;
    TimelinePlot* plot = view.plot();
    QWidget* window = &view;
#else
    TimelinePlot plot_widget;
    TimelinePlot* plot = &plot_widget;
    QWidget* window = &plot_widget;
#endif
    window->resize(width, height);
    window->show();
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();  // layouts settle at the window's size
    }
    // What QCustomPlot costs by itself at this size: axes, grid, buffers.
    const std::vector<double> empty = time_frames(plot, frames, [](int) {});
    QElapsedTimer load;
    load.start();
    plot->setTimeline(timeline);
    QCoreApplication::processEvents();
    const double load_ms = static_cast<double>(load.nsecsElapsed()) / 1e6;
#ifdef PIPEWRIGHT_HAVE_LANE_VIEW
    if (expanded) {
        plot->expandAllGroups();
    }
    const int drawn_lanes = plot->lanes().drawnLanes();
#else
    const int drawn_lanes = timeline.num_ranks();
#endif
    if (!png.isEmpty()) {
        // A look at what the frames draw, before they are timed.
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QCoreApplication::processEvents();
        window->grab().save(png);
    }
    std::printf("%s: %d devices, %zu actions, %d lanes drawn%s, window %dx%d, %d frames per case\n",
                project_path.c_str(), timeline.num_ranks(), timeline.events.size(), drawn_lanes,
                expanded ? " (groups expanded)" : "", width, height, frames);
    std::printf("setTimeline + first frame: %.1f ms\n", load_ms);
    std::printf("%-24s %8s %8s %8s\n", "case (ms per frame)", "median", "p90", "max");

    report("empty plot", empty);
    QCPAxis* x = plot->xAxis;
    const double span = x->range().size();
    report("whole iteration", time_frames(plot, frames, [](int) {}));
    // Zoom in around the middle, 10 % per frame, then back out.
    const double centre = x->range().center();
    report("zoom in", time_frames(plot, frames, [&](int) { x->scaleRange(0.9, centre); }));
    report("zoom out", time_frames(plot, frames, [&](int) { x->scaleRange(1 / 0.9, centre); }));
    // Pan across at a twentieth of the iteration, 2 % of the view per frame.
    x->setRange(0, span / 20);
    report("pan (1/20 zoom)", time_frames(plot, frames, [&](int) { x->moveRange(span / 1000); }));
    x->setRange(0, span);
    report("pan (whole)", time_frames(plot, frames, [&](int) { x->moveRange(span / 200); }));
#ifdef PIPEWRIGHT_HAVE_LANE_VIEW
    x->setRange(0, span);
    report("scroll lanes", time_frames(plot, frames, [&](int i) {
               plot->scrollLanesTo(i * plot->lanes().contentHeight() / frames);
           }));
    report("zoom lanes", time_frames(plot, frames, [&](int i) {
               plot->zoomLanes(i < frames / 2 ? 1.05 : 1 / 1.05, plot->height() / 2.0);
           }));
#endif
    return 0;
}
