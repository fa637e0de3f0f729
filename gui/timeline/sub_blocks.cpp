#include "timeline/sub_blocks.h"

#include <QCoreApplication>

#include "style/colors.h"

namespace pipewright::gui {

QColor sub_block_color(SubBlock kind, bool dark) {
    switch (kind) {
        case SubBlock::tensor:
            return tensor_collective_color(dark);
        case SubBlock::experts:
            return expert_all_to_all_color(dark);
        case SubBlock::context:
            return context_exchange_color(dark);
    }
    return tensor_collective_color(dark);
}

QString sub_block_key(SubBlock kind) {
    switch (kind) {
        case SubBlock::tensor:
            return QCoreApplication::translate("SubBlock", "Tensor all-reduce (within F and B)");
        case SubBlock::experts:
            return QCoreApplication::translate("SubBlock", "Experts' all-to-all (within F and B)");
        case SubBlock::context:
            return QCoreApplication::translate("SubBlock",
                                               "Keys and values awaited (within F and B)");
    }
    return {};
}

QString sub_block_line(SubBlock kind, const QString& duration) {
    switch (kind) {
        case SubBlock::tensor:
            return QCoreApplication::translate(
                       "SubBlock", "of which %1 in its tensor-parallel group's all-reduces")
                .arg(duration);
        case SubBlock::experts:
            return QCoreApplication::translate(
                       "SubBlock",
                       "of which %1 in the experts' all-to-alls (dispatching the tokens to their "
                       "experts' replicas, and combining the results), unless an overlapped pair "
                       "hid them under its other half's compute")
                .arg(duration);
        case SubBlock::context:
            return QCoreApplication::translate(
                       "SubBlock",
                       "of which %1 waiting for the keys and values of the other ranks that share "
                       "each sequence (context parallelism), beyond what its attention hid")
                .arg(duration);
    }
    return {};
}

}  // namespace pipewright::gui
