#include "studio_core/timeline/action_words.h"

#include <QCoreApplication>

namespace pipewright::gui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("ActionWords", text);
}

}  // namespace

QString action_kind_in_words(ActionType type) {
    switch (type) {
        case ActionType::forward:
            return tr("forward");
        case ActionType::backward:
            return tr("backward");
        case ActionType::backward_input:
            return tr("input gradient");
        case ActionType::backward_weight:
            return tr("weight gradient");
        case ActionType::send_forward:
            return tr("send of activations");
        case ActionType::recv_forward:
            return tr("receive of activations");
        case ActionType::send_backward:
            return tr("send of gradients");
        case ActionType::recv_backward:
            return tr("receive of gradients");
        case ActionType::unshard:
            return tr("gathering of sharded weights");
        case ActionType::reshard:
            return tr("release of gathered weights");
        case ActionType::reduce_grad:
            return tr("gradient reduction across replicas");
    }
    return QString::fromUtf8(to_string(type).data(),
                             static_cast<qsizetype>(to_string(type).size()));
}

QString action_in_words(const Action& a) {
    if (is_collective(a.type)) {
        return tr("stage %1, %2").arg(a.stage).arg(action_kind_in_words(a.type));
    }
    if (is_compute(a.type)) {
        return tr("stage %1, %2 of micro-batch %3")
            .arg(a.stage)
            .arg(action_kind_in_words(a.type))
            .arg(a.microbatch);
    }
    const bool forward = a.type == ActionType::send_forward || a.type == ActionType::recv_forward;
    const QString what = forward ? tr("the activations") : tr("the gradient");
    const QString sentence = is_send(a.type)
                                 ? tr("stage %1 sends %2 of micro-batch %3 to stage %4")
                                 : tr("stage %1 receives %2 of micro-batch %3 from stage %4");
    return sentence.arg(a.stage).arg(what).arg(a.microbatch).arg(peer_stage(a));
}

}  // namespace pipewright::gui
