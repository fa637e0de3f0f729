#pragma once

#include <QTextBrowser>
#include <QTimer>

namespace pipewright::gui {

// A text browser whose pictures are never wider than its page: the user
// guide's 1,600-pixel screenshots are scaled down to the viewer (they looked
// like a second live window, and needed sideways scrolling), and scaled
// again when the viewer is resized. Smaller pictures keep their size.
class FittedImageBrowser : public QTextBrowser {
    Q_OBJECT

  public:
    explicit FittedImageBrowser(QWidget* parent = nullptr);

    QVariant loadResource(int type, const QUrl& name) override;
    // The widest a picture is drawn, in pixels.
    [[nodiscard]] int pictureWidth() const;

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    QTimer refit_;
    int fitted_for_ = -1;  // pictureWidth() when the page was last loaded
};

}  // namespace pipewright::gui
