#include "editor/exact_spin_box.h"

namespace pipewright::gui {

ExactSpinBox::ExactSpinBox(int decimals, QWidget* parent) : QDoubleSpinBox(parent) {
    setDecimals(decimals);
}

QString ExactSpinBox::textFromValue(double value) const {
    QString text = locale().toString(value, 'f', decimals());
    const QChar point = locale().decimalPoint().front();
    if (text.contains(point)) {
        while (text.endsWith(QLatin1Char('0'))) {
            text.chop(1);
        }
        if (text.endsWith(point)) {
            text.chop(1);
        }
    }
    if (!isGroupSeparatorShown()) {
        text.remove(locale().groupSeparator());
    }
    return text;
}

}  // namespace pipewright::gui
