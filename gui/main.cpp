#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QIcon>
#include <QSettings>
#include <QTimer>
#include <cstdio>

#include "document/document_autosave.h"
#include "studio_core/format/english_plurals.h"
#include "studio_core/project/asset_paths.h"
#include "window/main_window.h"
#include "window/recovery_prompt.h"
#include "window/screenshot.h"

int main(int argc, char* argv[]) {
    QApplication app(argc, argv);
    pipewright::gui::EnglishPlurals plurals;
    QCoreApplication::installTranslator(&plurals);
    QApplication::setOrganizationName(QStringLiteral("Pipewright"));
    QApplication::setApplicationName(QStringLiteral("Pipewright Studio"));
    QApplication::setApplicationVersion(QStringLiteral(PIPEWRIGHT_VERSION));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/pipewright-studio.svg")));
    // Lets Wayland shells match the window to the installed desktop entry and icon.
    QGuiApplication::setDesktopFileName(QStringLiteral("pipewright-studio"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Plan, simulate and run pipeline model-parallel training."));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("Render the main window to OUT.png and exit."),
                                  QStringLiteral("OUT.png"));
    QCommandLineOption size(QStringLiteral("size"),
                            QStringLiteral("Window size for --screenshot (default 1600x1000)."),
                            QStringLiteral("WxH"), QStringLiteral("1600x1000"));
    QCommandLineOption crop(
        QStringLiteral("crop"),
        QStringLiteral(
            "With --screenshot: keep only this part of the window, WIDTHxHEIGHT+LEFT+TOP "
            "in the window's pixels (e.g. 1066x537+190+440)."),
        QStringLiteral("WxH+X+Y"));
    QCommandLineOption tab(
        QStringLiteral("tab"),
        QStringLiteral("View shown by --screenshot: timeline, metrics, comparison (of "
                       "schedules), layouts (the comparison of data × pipeline layouts) or run."),
        QStringLiteral("VIEW"), QStringLiteral("timeline"));
    QCommandLineOption dark(QStringLiteral("dark"), QStringLiteral("Use the dark palette."));
    QCommandLineOption run(QStringLiteral("run"),
                           QStringLiteral("With --screenshot: make a short real run first "
                                          "(pipewright run), to show its measured timeline."));
    QCommandLineOption profile(
        QStringLiteral("profile"),
        QStringLiteral("With --screenshot: profile this machine first (pipewright profile), so "
                       "that the simulation uses the measured costs."));
    parser.addOptions({screenshot, size, crop, tab, dark, run, profile});
    parser.addPositionalArgument(QStringLiteral("PROJECT"),
                                 QStringLiteral("Project file to open (default: an example)."));
    parser.process(app);

    QString project = parser.positionalArguments().value(0);
    if (project.isEmpty()) {
        project = pipewright::gui::default_example();
    }

    if (parser.isSet(screenshot)) {
        pipewright::gui::ScreenshotRequest request;
        request.output = parser.value(screenshot);
        request.project = project;
        request.view = parser.value(tab);
        request.dark = parser.isSet(dark);
        request.run = parser.isSet(run);
        request.profile = parser.isSet(profile);
        QString error;
        if (!pipewright::gui::parse_size(parser.value(size), &request.size, &error) ||
            (parser.isSet(crop) &&
             !pipewright::gui::parse_crop(parser.value(crop), &request.crop, &error)) ||
            !pipewright::gui::take_screenshot(request, &error)) {
            std::fprintf(stderr, "pipewright-studio: %s\n", qPrintable(error));
            return 1;
        }
        return 0;
    }

    pipewright::gui::MainWindow window;
    window.setDarkTheme(
        QSettings().value(QStringLiteral("darkTheme"), parser.isSet(dark)).toBool());
    if (!window.restoreLayout()) {
        window.resize(1500, 950);
    }
    window.show();
    const QString recovery = pipewright::gui::default_recovery_folder();
    const bool recovered = pipewright::gui::offer_recovery(window, recovery);
    if (!recovered && !project.isEmpty()) {
        window.openFile(project);
    }
    // Started after the offer, so that this session's own file is not offered.
    pipewright::gui::DocumentAutosave autosave(window.document(), recovery);
    return QApplication::exec();
}
