// Paint times of the studio's cluster canvas at fit-to-view, while zooming
// and while panning (bench/README.md, "Cluster canvas paint times"). Not a
// test: it prints figures.
//
//   canvas_bench PROJECT [--size WxH] [--frames N] [--png FILE]
//
// Simulates PROJECT, shows it on the canvas in a window of the given size
// (Qt's offscreen platform unless QT_QPA_PLATFORM says otherwise), as it
// opens (nodes collapsed above 32 devices) and then with every node
// expanded, and times each frame: one synchronous repaint of the view.
// --png saves the canvas as it opens, and FILE-expanded.png expanded, before
// the timing.
#include <QApplication>
#include <QElapsedTimer>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "frame_figures.h"
#include "pipewright/core/project_io.h"
#include "studio_core/simulation/simulation_runner.h"
#include "topology/topology_canvas.h"
#include "topology/topology_scene.h"
#include "topology/topology_view.h"

namespace {

using pipewright::bench::ms_since;

using pipewright::gui::TopologyView;

// Each frame one repaint of the view.
std::vector<double> time_frames(TopologyView* view, int frames,
                                const std::function<void(int)>& step) {
    return pipewright::bench::time_frames(frames, step, [view] { view->viewport()->repaint(); });
}

void report(const char* name, const std::vector<double>& ms) {
    pipewright::bench::print_frame_row(name, 26, ms);
}

// The cases of one state of the canvas (collapsed as it opens, or expanded).
void time_cases(const char* state, TopologyView* view, int frames) {
    std::printf("%s (ms per frame)%*s %8s %8s %8s\n", state,
                static_cast<int>(11 - std::strlen(state)), "", "median", "p90", "max");
    view->fitToView();
    const double fitted = view->zoom();
    report("fit to view", time_frames(view, frames, [](int) {}));
    // Zoom in around the middle, 10 % per frame, then back out.
    const QPointF middle = QRectF(view->viewport()->rect()).center();
    report("zoom in", time_frames(view, frames, [&](int) { view->zoomBy(1.1, middle); }));
    report("zoom out", time_frames(view, frames, [&](int) { view->zoomBy(1 / 1.1, middle); }));
    // Pan at the devices' own size, 20 pixels per frame right and down,
    // wrapping within the cluster so that every frame shows some of it.
    view->zoomBy(1.0 / view->zoom(), middle);
    const QRectF cluster = view->scene()->sceneRect();
    const QSizeF half = QSizeF(view->viewport()->size()) / 2;
    const double room_x = std::max(1.0, cluster.width() - 2 * half.width());
    const double room_y = std::max(1.0, cluster.height() - 2 * half.height());
    report("pan (zoom 1)", time_frames(view, frames, [&](int i) {
               view->centerOn(cluster.left() + half.width() + std::fmod(20.0 * i, room_x),
                              cluster.top() + half.height() + std::fmod(20.0 * i, room_y));
           }));
    view->zoomBy(fitted / view->zoom(), middle);
}

}  // namespace

int main(int argc, char* argv[]) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    const char* usage = "usage: canvas_bench PROJECT [--size WxH] [--frames N] [--png FILE]\n";
    std::string project_path;
    int width = 430;
    int height = 340;
    int frames = 40;
    QString png;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--size" && i + 1 < argc) {
            if (std::sscanf(argv[++i], "%dx%d", &width, &height) != 2) {
                std::fprintf(stderr, "canvas_bench: --size wants WxH\n");
                return 2;
            }
        } else if (arg == "--frames" && i + 1 < argc) {
            frames = std::max(5, std::atoi(argv[++i]));
        } else if (arg == "--png" && i + 1 < argc) {
            png = QString::fromLocal8Bit(argv[++i]);
        } else if (arg == "--help" || arg == "-h") {
            std::printf("%s", usage);
            return 0;
        } else {
            project_path = arg;
        }
    }
    if (project_path.empty()) {
        std::fprintf(stderr, "%s", usage);
        return 2;
    }
    const auto loaded = pipewright::load_project_file(project_path);
    if (!loaded.project) {
        std::fprintf(stderr, "canvas_bench: cannot read %s\n", project_path.c_str());
        return 1;
    }
    const pipewright::Project& project = *loaded.project;
    const auto result = pipewright::gui::simulate_now(project, ".");
    if (!result.report) {
        std::fprintf(stderr, "canvas_bench: %s does not simulate\n", project_path.c_str());
        return 1;
    }

    pipewright::gui::TopologyScene scene;
    pipewright::gui::TopologyCanvas canvas(&scene);
    TopologyView* view = canvas.view();
    canvas.resize(width, height);
    canvas.show();
    for (int i = 0; i < 5; ++i) {
        QCoreApplication::processEvents();  // layouts settle at the window's size
    }
    QElapsedTimer timer;
    timer.start();
    scene.startProject(project);
    view->fitToView();
    scene.rebuild(project, result.report->devices, {});
    view->viewport()->repaint();
    const double open_ms = ms_since(timer);
    if (!png.isEmpty()) {
        QCoreApplication::processEvents();  // scroll bars shown or hidden
        canvas.grab().save(png);
    }
    std::printf("%s: %d nodes, %d devices, %d collapsed, canvas %dx%d, %d frames per case\n",
                project_path.c_str(), scene.nodeCount(), scene.deviceCount(),
                scene.collapsedCount(), width, height, frames);
    std::printf("open (rebuild, fit, first frame): %.1f ms, %d items\n", open_ms,
                static_cast<int>(scene.items().size()));
    time_cases("as opened", view, frames);

    timer.start();
    scene.setAllNodesCollapsed(false);
    view->fitToView();
    view->viewport()->repaint();
    std::printf("expand all (rebuild, fit, first frame): %.1f ms, %d items\n", ms_since(timer),
                static_cast<int>(scene.items().size()));
    if (!png.isEmpty()) {
        QCoreApplication::processEvents();
        QString expanded = png;
        expanded.replace(QStringLiteral(".png"), QStringLiteral("-expanded.png"));
        canvas.grab().save(expanded);
    }
    time_cases("expanded", view, frames);
    return 0;
}
