#include "studio_core/canvas/canvas_detail.h"

namespace pipewright::gui {

bool text_readable(double font_pixels, double scale) {
    return font_pixels * scale >= kMinReadableTextPixels;
}

double readable_scale(double font_pixels) {
    return font_pixels > 0 ? kMinReadableTextPixels / font_pixels : 1.0;
}

bool opens_collapsed(int devices) {
    return devices > kCollapseAboveDevices;
}

}  // namespace pipewright::gui
