#include "style/colors.h"

#include <QObject>
#include <array>

namespace pipewright::gui {

QColor block_color(BlockKind kind) {
    switch (kind) {
        case BlockKind::forward:
            return {0x00, 0x72, 0xB2};  // blue
        case BlockKind::backward:
            return {0xE6, 0x9F, 0x00};  // orange
        case BlockKind::backward_input:
            return {0xD5, 0x5E, 0x00};  // vermillion
        case BlockKind::backward_weight:
            return {0x00, 0x9E, 0x73};  // bluish green
        case BlockKind::send:
            return {0x56, 0xB4, 0xE9};  // sky blue
        case BlockKind::recv:
            return {0xCC, 0x79, 0xA7};  // reddish purple
        case BlockKind::collective:
            return {0x59, 0x59, 0x59};  // dark grey: the Okabe-Ito set has no eighth hue
    }
    return Qt::gray;
}

QString block_name(BlockKind kind) {
    switch (kind) {
        case BlockKind::forward:
            return QObject::tr("Forward (F)");
        case BlockKind::backward:
            return QObject::tr("Backward (B)");
        case BlockKind::backward_input:
            return QObject::tr("Input grad (I)");
        case BlockKind::backward_weight:
            return QObject::tr("Weight grad (W)");
        case BlockKind::send:
            return QObject::tr("Send");
        case BlockKind::recv:
            return QObject::tr("Recv wait");
        case BlockKind::collective:
            return QObject::tr("Replica sync");
    }
    return {};
}

QColor stage_color(int stage) {
    // Lighter tints of the Okabe-Ito hues, so dark chip text stays readable.
    static const std::array<QColor, 7> colors = {QColor(0x8C, 0xC4, 0xE8), QColor(0xF5, 0xCE, 0x7A),
                                                 QColor(0x7F, 0xD1, 0xB9), QColor(0xF0, 0xB0, 0x80),
                                                 QColor(0xE3, 0xB5, 0xD0), QColor(0xB3, 0xDB, 0xF5),
                                                 QColor(0xF0, 0xE4, 0x8A)};
    if (stage < 0) {
        return QColor(0xBB, 0xBB, 0xBB);
    }
    return colors[static_cast<std::size_t>(stage) % colors.size()];
}

QColor tensor_collective_color(bool dark) {
    return dark ? QColor(0x4F, 0xC3, 0xC9) : QColor(0x1B, 0x8A, 0x90);  // teal
}

QColor expert_all_to_all_color(bool dark) {
    return dark ? QColor(0xC3, 0x9B, 0xD3) : QColor(0x7D, 0x3C, 0x98);  // purple
}

QColor context_exchange_color(bool dark) {
    return dark ? QColor(0xE8, 0xB8, 0x4A) : QColor(0x9A, 0x6A, 0x00);  // ochre
}

QColor busy_share_color(bool dark) {
    return dark ? QColor(0xD2, 0xC3, 0xAF) : QColor(0x6E, 0x5F, 0x50);
}

QColor warning_color() {
    return {0xD0, 0x30, 0x30};
}

// Okabe-Ito's orange, darkened to read as text on a light background.
QColor caution_color() {
    return {0xB8, 0x6E, 0x00};
}

}  // namespace pipewright::gui
