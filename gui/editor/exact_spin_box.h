#pragma once

#include <QDoubleSpinBox>

namespace pipewright::gui {

// A spin box that shows a figure as the project holds it: 1.25 GB/s reads
// "1.25", not "1.3", and 25 reads "25", not "25.000". It keeps `decimals`
// digits after the point (the finest step a user can type) and drops the
// trailing zeros when it displays the value.
class ExactSpinBox : public QDoubleSpinBox {
  public:
    explicit ExactSpinBox(int decimals, QWidget* parent = nullptr);

  protected:
    [[nodiscard]] QString textFromValue(double value) const override;
};

}  // namespace pipewright::gui
