#pragma once

#include <QWidget>

#include "pipewright/sim/simulation.h"

class QCustomPlot;
class QLabel;

namespace pipewright::gui {

// The figures of one simulated iteration: headline numbers, per-device
// utilisation and bubble, peak memory against capacity, memory over time.
class MetricsPanel : public QWidget {
    Q_OBJECT

  public:
    explicit MetricsPanel(QWidget* parent = nullptr);

    void setReport(const SimulationReport& report);
    void clear(const QString& message);
    [[nodiscard]] QCustomPlot* memoryPlot() const { return curve_; }
    [[nodiscard]] QString headline() const;

  protected:
    void changeEvent(QEvent* event) override;

  private:
    void restyle();

    QLabel* iteration_ = nullptr;
    QLabel* throughput_ = nullptr;
    QLabel* bubble_ = nullptr;
    QLabel* memory_ = nullptr;
    QCustomPlot* utilisation_ = nullptr;
    QCustomPlot* peak_ = nullptr;
    QCustomPlot* curve_ = nullptr;
};

}  // namespace pipewright::gui
