#include "studio_core/action_words.h"

#include <QCoreApplication>

namespace pipewright::gui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("ActionWords", text);
}

}  // namespace

QString action_in_words(const Action& a) {
    const int s = a.stage;
    const int m = a.microbatch;
    switch (a.type) {
        case ActionType::forward:
            return tr("stage %1, forward of micro-batch %2").arg(s).arg(m);
        case ActionType::backward:
            return tr("stage %1, backward of micro-batch %2").arg(s).arg(m);
        case ActionType::backward_input:
            return tr("stage %1, input gradient of micro-batch %2").arg(s).arg(m);
        case ActionType::backward_weight:
            return tr("stage %1, weight gradient of micro-batch %2").arg(s).arg(m);
        case ActionType::send_forward:
            return tr("stage %1 sends the activations of micro-batch %2 to stage %3")
                .arg(s)
                .arg(m)
                .arg(peer_stage(a));
        case ActionType::recv_forward:
            return tr("stage %1 receives the activations of micro-batch %2 from stage %3")
                .arg(s)
                .arg(m)
                .arg(peer_stage(a));
        case ActionType::send_backward:
            return tr("stage %1 sends the gradient of micro-batch %2 to stage %3")
                .arg(s)
                .arg(m)
                .arg(peer_stage(a));
        case ActionType::recv_backward:
            return tr("stage %1 receives the gradient of micro-batch %2 from stage %3")
                .arg(s)
                .arg(m)
                .arg(peer_stage(a));
    }
    return QString::fromStdString(to_string(a));
}

}  // namespace pipewright::gui
