#include "window/fitted_image_browser.h"

#include <QImage>
#include <QScrollBar>
#include <QTextDocument>
#include <algorithm>

namespace pipewright::gui {

FittedImageBrowser::FittedImageBrowser(QWidget* parent) : QTextBrowser(parent) {
    // A drag of the window's edge refits once it settles.
    refit_.setSingleShot(true);
    refit_.setInterval(150);
    connect(&refit_, &QTimer::timeout, this, [this] {
        if (pictureWidth() == fitted_for_ || source().isEmpty()) {
            return;
        }
        const int scroll = verticalScrollBar()->value();
        const int range = std::max(1, verticalScrollBar()->maximum());
        reload();  // loads the pictures again, at the new width
        verticalScrollBar()->setValue(scroll * verticalScrollBar()->maximum() / range);
    });
}

int FittedImageBrowser::pictureWidth() const {
    const auto margins = static_cast<int>(2 * document()->documentMargin()) + 8;
    return std::max(200, viewport()->width() - margins);
}

QVariant FittedImageBrowser::loadResource(int type, const QUrl& name) {
    QVariant resource = QTextBrowser::loadResource(type, name);
    if (type != QTextDocument::ImageResource) {
        return resource;
    }
    fitted_for_ = pictureWidth();
    QImage image = resource.typeId() == QMetaType::QImage
                       ? resource.value<QImage>()
                       : QImage::fromData(resource.toByteArray());
    if (image.isNull() || image.width() <= fitted_for_) {
        return resource;
    }
    return image.scaledToWidth(fitted_for_, Qt::SmoothTransformation);
}

void FittedImageBrowser::resizeEvent(QResizeEvent* event) {
    QTextBrowser::resizeEvent(event);
    refit_.start();
}

}  // namespace pipewright::gui
