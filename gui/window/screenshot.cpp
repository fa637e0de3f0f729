#include "window/screenshot.h"

#include <QApplication>
#include <QEventLoop>
#include <QImage>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTimer>
#include <functional>
#include <optional>

#include "document/project_document.h"
#include "metrics/comparison_panel.h"
#include "run/costs_bar.h"
#include "run/profile_controller.h"
#include "run/run_controller.h"
#include "run/run_panel.h"
#include "studio_core/simulation/simulation_runner.h"
#include "window/main_window.h"

namespace pipewright::gui {

bool parse_size(const QString& text, QSize* size, QString* error) {
    static const QRegularExpression re(QStringLiteral("^(\\d{2,5})x(\\d{2,5})$"));
    const auto match = re.match(text.trimmed());
    if (!match.hasMatch()) {
        *error = QStringLiteral("--size wants WIDTHxHEIGHT in pixels, e.g. 1600x1000; got \"%1\"")
                     .arg(text);
        return false;
    }
    *size = QSize(match.captured(1).toInt(), match.captured(2).toInt());
    return true;
}

bool parse_crop(const QString& text, QRect* crop, QString* error) {
    static const QRegularExpression re(
        QStringLiteral("^(\\d{1,5})x(\\d{1,5})\\+(\\d{1,5})\\+(\\d{1,5})$"));
    const auto match = re.match(text.trimmed());
    const QRect rect = match.hasMatch()
                           ? QRect(match.captured(3).toInt(), match.captured(4).toInt(),
                                   match.captured(1).toInt(), match.captured(2).toInt())
                           : QRect();
    if (rect.isEmpty()) {
        *error = QStringLiteral(
                     "--crop wants WIDTHxHEIGHT+LEFT+TOP in pixels of the window, e.g. "
                     "1066x537+190+440 (a part 1066 wide and 537 high, 190 from the left and 440 "
                     "from the top); got \"%1\"")
                     .arg(text);
        return false;
    }
    *crop = rect;
    return true;
}

bool crop_fits(const QRect& crop, const QSize& size, QString* error) {
    if (QRect(QPoint(0, 0), size).contains(crop)) {
        return true;
    }
    *error = QStringLiteral(
                 "--crop %1x%2+%3+%4 goes beyond the %5x%6 window (it reaches %7 across and %8 "
                 "down)")
                 .arg(crop.width())
                 .arg(crop.height())
                 .arg(crop.x())
                 .arg(crop.y())
                 .arg(size.width())
                 .arg(size.height())
                 .arg(crop.x() + crop.width())
                 .arg(crop.y() + crop.height());
    return false;
}

namespace {

// The tab that `view` names (--tab).
int tab_of(const QString& view) {
    return view == QLatin1String("metrics")      ? 1
           : view == QLatin1String("comparison") ? 2
           : view == QLatin1String("layouts")    ? 2
           : view == QLatin1String("run")        ? 3
                                                 : 0;
}

// Begins a job with `start` and waits for its `succeeded` or `failed`
// signal; ten minutes bound a stuck one, which `stop` ends. The failure's
// words (empty when it succeeded), or nothing when it did not start.
template <typename Sender, typename Succeeded, typename Failed>
std::optional<QString> wait_for_job(Sender* sender, Succeeded succeeded, Failed failed,
                                    const std::function<bool()>& start,
                                    const std::function<void()>& stop, const QString& too_long) {
    QEventLoop loop;
    QString failure;
    QObject::connect(sender, succeeded, &loop, &QEventLoop::quit);
    QObject::connect(sender, failed, &loop, [&](const QString& message) {
        failure = message;
        loop.quit();
    });
    if (!start()) {
        return std::nullopt;
    }
    QTimer::singleShot(10 * 60 * 1000, &loop, [&] {
        failure = too_long;
        stop();
        loop.quit();
    });
    loop.exec();
    return failure;
}

// --profile: the simulation is then priced with this machine's costs.
bool profile_first(MainWindow& window, QString* error) {
    RunPanel* panel = window.runPanel();
    CostsBar* costs = panel->costsBar();
    const auto failure = wait_for_job(
        costs, &CostsBar::profileSucceeded, &CostsBar::profileFailed,
        [&window] { return window.profileController()->startProfile(); },
        [costs] { costs->cancelProfile(); },
        QStringLiteral("the profile took more than ten minutes"));
    if (!failure) {
        *error = QStringLiteral("cannot profile: %1").arg(panel->errorText());
        return false;
    }
    if (!failure->isEmpty()) {
        *error = QStringLiteral("the profile failed: %1").arg(*failure);
        return false;
    }
    return true;
}

// --run: a short real run, so that the picture shows its measured timeline
// and the Run panel's table.
bool run_first(MainWindow& window, QString* error) {
    RunPanel* panel = window.runPanel();
    panel->setDefaultSteps(ScreenshotRequest::kRunSteps);
    // A short run takes seconds; the bound is for a stuck one.
    const auto failure = wait_for_job(
        panel, &RunPanel::runSucceeded, &RunPanel::runFailed,
        [&window] { return window.runController()->startRun(); }, [panel] { panel->cancel(); },
        QStringLiteral("the run took more than ten minutes"));
    if (!failure) {
        *error = QStringLiteral("cannot start the run: %1").arg(panel->errorText());
        return false;
    }
    if (!failure->isEmpty()) {
        *error = QStringLiteral("the run failed: %1").arg(*failure);
        return false;
    }
    return true;
}

// The Comparison tab has nothing to show until asked: its schedules, or
// with `layouts` its data × pipeline layouts.
void compare_first(MainWindow& window, bool layouts) {
    QEventLoop loop;
    ComparisonPanel* panel = window.comparisonPanel();
    QObject::connect(panel, &ComparisonPanel::compared, &loop, &QEventLoop::quit);
    const Project& project = window.document()->project();
    const QString base_dir = window.document()->baseDir();
    if (layouts) {
        panel->compareLayouts(project, base_dir, window.runner()->costs());
    } else {
        panel->compare(project, base_dir, window.runner()->costs());
    }
    loop.exec();
}

// The window as the user would see it, settled, into the PNG file.
bool save_picture(MainWindow& window, const ScreenshotRequest& request, QString* error) {
    // Let layouts settle and the plots repaint at their final sizes.
    for (int i = 0; i < 3; ++i) {
        QApplication::processEvents();
    }
    // A profile changes the costs, and an edit may still be waiting for its
    // simulation: then the picture needs a fresh one. Otherwise the timeline
    // opened with the file is current (on a 4 M-action project a second
    // simulation doubled the time a picture takes).
    if (request.profile || window.runner()->busy()) {
        window.simulateNow();
    }
    QApplication::processEvents();
    QImage image = window.grab().toImage();
    if (image.deviceIndependentSize().toSize() != request.size) {
        *error = QStringLiteral("the window could not take the size %1x%2 (it is %3x%4)")
                     .arg(request.size.width())
                     .arg(request.size.height())
                     .arg(image.width())
                     .arg(image.height());
        return false;
    }
    if (!request.crop.isNull()) {
        // The crop is in the window's pixels; the picture's may be more.
        const qreal ratio = image.devicePixelRatio();
        image =
            image.copy(qRound(request.crop.x() * ratio), qRound(request.crop.y() * ratio),
                       qRound(request.crop.width() * ratio), qRound(request.crop.height() * ratio));
    }
    if (!image.save(request.output, "PNG")) {
        *error = QStringLiteral("cannot write %1").arg(request.output);
        return false;
    }
    return true;
}

}  // namespace

bool take_screenshot(const ScreenshotRequest& request, QString* error) {
    if (request.project.isEmpty()) {
        *error = QStringLiteral("no project given and no example found (assets folder missing)");
        return false;
    }
    // Said before the project is opened and any run made.
    if (!request.crop.isNull() && !crop_fits(request.crop, request.size, error)) {
        return false;
    }
    MainWindow window;
    window.setDarkTheme(request.dark);
    window.setMinimumSize(0, 0);
    window.resize(request.size);
    if (!window.openFile(request.project)) {
        *error = QStringLiteral("cannot open %1").arg(request.project);
        return false;
    }
    window.show();
    if (request.profile && !profile_first(window, error)) {
        return false;
    }
    if (request.run && !run_first(window, error)) {
        return false;
    }
    const int tab = tab_of(request.view);
    window.views()->setCurrentIndex(tab);
    if (tab == 2) {
        compare_first(window, request.view == QLatin1String("layouts"));
    }
    return save_picture(window, request, error);
}

}  // namespace pipewright::gui
