#include "window/screenshot.h"

#include <QApplication>
#include <QEventLoop>
#include <QImage>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTimer>

#include "document/project_document.h"
#include "metrics/comparison_panel.h"
#include "run/costs_bar.h"
#include "run/run_panel.h"
#include "studio_core/simulation_runner.h"
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

bool take_screenshot(const ScreenshotRequest& request, QString* error) {
    if (request.project.isEmpty()) {
        *error = QStringLiteral("no project given and no example found (assets folder missing)");
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
    const int tab = request.view == QLatin1String("metrics")      ? 1
                    : request.view == QLatin1String("comparison") ? 2
                    : request.view == QLatin1String("layouts")    ? 2
                    : request.view == QLatin1String("run")        ? 3
                                                                  : 0;
    window.show();
    if (request.profile) {
        CostsBar* costs = window.runPanel()->costsBar();
        QEventLoop loop;
        QString failure;
        QObject::connect(costs, &CostsBar::profileSucceeded, &loop, &QEventLoop::quit);
        QObject::connect(costs, &CostsBar::profileFailed, &loop, [&](const QString& message) {
            failure = message;
            loop.quit();
        });
        if (!window.startProfile()) {
            *error = QStringLiteral("cannot profile: %1").arg(window.runPanel()->errorText());
            return false;
        }
        QTimer::singleShot(10 * 60 * 1000, &loop, [&] {
            failure = QStringLiteral("the profile took more than ten minutes");
            costs->cancelProfile();
            loop.quit();
        });
        loop.exec();
        if (!failure.isEmpty()) {
            *error = QStringLiteral("the profile failed: %1").arg(failure);
            return false;
        }
    }
    if (request.run) {
        RunPanel* panel = window.runPanel();
        panel->setDefaultSteps(ScreenshotRequest::kRunSteps);
        QEventLoop loop;
        QString failure;
        QObject::connect(panel, &RunPanel::runSucceeded, &loop, &QEventLoop::quit);
        QObject::connect(panel, &RunPanel::runFailed, &loop, [&](const QString& message) {
            failure = message;
            loop.quit();
        });
        if (!window.startRun()) {
            *error = QStringLiteral("cannot start the run: %1").arg(panel->errorText());
            return false;
        }
        // A short run takes seconds; this bounds a stuck one.
        QTimer::singleShot(10 * 60 * 1000, &loop, [&] {
            failure = QStringLiteral("the run took more than ten minutes");
            panel->cancel();
            loop.quit();
        });
        loop.exec();
        if (!failure.isEmpty()) {
            *error = QStringLiteral("the run failed: %1").arg(failure);
            return false;
        }
    }
    window.views()->setCurrentIndex(tab);
    if (tab == 2) {
        QEventLoop loop;
        QObject::connect(window.comparisonPanel(), &ComparisonPanel::compared, &loop,
                         &QEventLoop::quit);
        if (request.view == QLatin1String("layouts")) {
            window.comparisonPanel()->compareLayouts(window.document()->project(),
                                                     window.document()->baseDir(),
                                                     window.runner()->costs());
        } else {
            window.comparisonPanel()->compare(window.document()->project(),
                                              window.document()->baseDir(),
                                              window.runner()->costs());
        }
        loop.exec();
    }
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
    if (!image.save(request.output, "PNG")) {
        *error = QStringLiteral("cannot write %1").arg(request.output);
        return false;
    }
    return true;
}

}  // namespace pipewright::gui
