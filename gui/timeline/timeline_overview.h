#pragma once

#include <QImage>
#include <QWidget>

namespace pipewright::gui {

class TimelinePlot;

// The whole iteration in a strip: every lane that passes the filter,
// compressed to the strip's height, each pixel shaded by how busy its devices
// are; the part the timeline shows is framed. Click or drag to move there.
class TimelineOverview : public QWidget {
    Q_OBJECT

  public:
    explicit TimelineOverview(TimelinePlot* plot, QWidget* parent = nullptr);

    [[nodiscard]] QSize sizeHint() const override;
    // The framed part, in the strip's pixels (for tests).
    [[nodiscard]] QRectF windowRect() const;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

  private:
    // The shading, redrawn only when the lanes or the size change.
    void rebuild();
    void navigate(const QPointF& pos);
    [[nodiscard]] QRectF strip() const;

    TimelinePlot* plot_;
    QImage image_;
    bool stale_ = true;
};

}  // namespace pipewright::gui
