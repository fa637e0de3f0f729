#pragma once

#include <QRect>
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
    // The part of the window the picture keeps (--crop), in the window's
    // pixels; null: the whole window.
    QRect crop;
    static constexpr int kRunSteps = 5;
};

// "1600x1000" -> QSize; false with a message for anything else.
bool parse_size(const QString& text, QSize* size, QString* error);

// "1066x537+190+440" (WIDTHxHEIGHT+LEFT+TOP, as ImageMagick writes a crop)
// -> QRect; false with a message for anything else or an empty rectangle.
bool parse_crop(const QString& text, QRect* crop, QString* error);

// Whether `crop` lies inside a window of `size`; false with a message when
// it does not.
bool crop_fits(const QRect& crop, const QSize& size, QString* error);

// Opens the project in a main window of the requested size, simulates it on
// this thread, renders the window (or its `crop`) into a PNG and returns;
// false with the reason when the crop does not fit the window, the project
// cannot be read, the run fails or the image cannot be written.
bool take_screenshot(const ScreenshotRequest& request, QString* error);

}  // namespace pipewright::gui
