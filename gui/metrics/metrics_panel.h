#pragma once

#include <QWidget>
#include <vector>

#include "pipewright/sim/simulation.h"

class QCPLayoutGrid;
class QCustomPlot;
class QLabel;

namespace pipewright::gui {

// The figures of one simulated iteration: headline numbers, per-device
// utilisation and bubble, peak memory against capacity, memory over time.
class MetricsPanel : public QWidget {
    Q_OBJECT

  public:
    explicit MetricsPanel(QWidget* parent = nullptr);
    ~MetricsPanel() override;

    // `memory_margin_bytes`: what every GPU keeps free (StudioCosts), said
    // on the Memory figure instead of the caution about what is not counted.
    void setReport(const SimulationReport& report, std::int64_t memory_margin_bytes = 0);
    void clear(const QString& message);
    [[nodiscard]] QCustomPlot* memoryPlot() const { return curve_; }
    [[nodiscard]] QCustomPlot* utilisationPlot() const { return utilisation_; }
    [[nodiscard]] QCustomPlot* peakPlot() const { return peak_; }
    [[nodiscard]] QString headline() const;
    // What the iteration includes besides the timeline (the tooltip).
    [[nodiscard]] QString iterationNote() const;

  protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

  private:
    void restyle();
    // The per-device bars: a bar per device while each gets a line for its
    // name, else a bar per node (or run of nodes).
    void drawDeviceBars();
    [[nodiscard]] int barRows() const;
    void showLegend(bool show);

    QLabel* iteration_ = nullptr;
    QLabel* throughput_ = nullptr;
    QLabel* bubble_ = nullptr;
    QLabel* memory_ = nullptr;
    QCustomPlot* utilisation_ = nullptr;
    QCustomPlot* peak_ = nullptr;
    QCustomPlot* curve_ = nullptr;
    QCPLayoutGrid* legend_column_ = nullptr;  // owned by curve_'s layout, or by this when out
    std::vector<DeviceMetrics> devices_;
    int drawn_rows_ = -1;  // bars drawn for devices_ (-1: none)
};

}  // namespace pipewright::gui
