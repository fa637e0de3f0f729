#pragma once

namespace pipewright::gui {

// How much of the cluster canvas to draw at a given zoom. Text rendered
// smaller than this many pixels cannot be read and only smears the boxes
// it sits on, so below it a device draws its load and memory as bars and a
// label draws nothing.
inline constexpr double kMinReadableTextPixels = 8;

// Whether text of `font_pixels` (its size at zoom 1) is readable at `scale`.
[[nodiscard]] bool text_readable(double font_pixels, double scale);

// The zoom at which text of `font_pixels` becomes readable.
[[nodiscard]] double readable_scale(double font_pixels);

// Projects with more devices than this open with every node collapsed to
// its summary: expanded, they do not fit a canvas at a readable size (the
// 104 devices of the GPT-3 example need about 15 screens).
inline constexpr int kCollapseAboveDevices = 32;

[[nodiscard]] bool opens_collapsed(int devices);

}  // namespace pipewright::gui
