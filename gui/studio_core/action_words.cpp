#include "studio_core/action_words.h"

#include <QCoreApplication>

namespace pipewright::gui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("ActionWords", text);
}

}  // namespace

QString action_in_words(const Action& a) {
    if (is_compute(a.type)) {
        const QString kind = a.type == ActionType::forward          ? tr("forward")
                             : a.type == ActionType::backward       ? tr("backward")
                             : a.type == ActionType::backward_input ? tr("input gradient")
                                                                    : tr("weight gradient");
        return tr("stage %1, %2 of micro-batch %3").arg(a.stage).arg(kind).arg(a.microbatch);
    }
    const bool forward = a.type == ActionType::send_forward || a.type == ActionType::recv_forward;
    const QString what = forward ? tr("the activations") : tr("the gradient");
    const QString sentence = is_send(a.type)
                                 ? tr("stage %1 sends %2 of micro-batch %3 to stage %4")
                                 : tr("stage %1 receives %2 of micro-batch %3 from stage %4");
    return sentence.arg(a.stage).arg(what).arg(a.microbatch).arg(peer_stage(a));
}

}  // namespace pipewright::gui
