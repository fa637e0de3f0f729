#pragma once

#include <QSize>
#include <QString>

namespace pipewright::gui {

struct ScreenshotRequest {
    QString output;
    QString project;
    QSize size{1600, 1000};
    QString view = QStringLiteral("timeline");  // timeline, metrics, comparison or run
    bool dark = false;
    // Make a short real run (pipewright run, kRunSteps steps) first, so the
    // picture shows its measured timeline and the Run panel's table.
    bool run = false;
    // Profile this machine first (pipewright profile), so that the
    // simulation uses the measured costs.
    bool profile = false;
    static constexpr int kRunSteps = 5;
};

// "1600x1000" -> QSize; false with a message for anything else.
bool parse_size(const QString& text, QSize* size, QString* error);

// Opens the project in a main window of the requested size, simulates it on
// this thread, renders the window into a PNG and returns; false with the
// reason when the project cannot be read, the run fails or the image cannot
// be written.
bool take_screenshot(const ScreenshotRequest& request, QString* error);

}  // namespace pipewright::gui
