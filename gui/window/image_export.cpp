#include "window/image_export.h"

#include <QBuffer>
#include <QImage>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QWidget>
#include <functional>

#include "pipewright/core/project_io.h"
#include "qcustomplot.h"

namespace pipewright::gui {

namespace {

constexpr double kPngScale = 2.0;  // sharp on high-density screens and in print
constexpr int kScreenDpi = 96;     // a widget pixel is 1/96 inch in SVG and PDF

using Painting = std::function<void(QCPPainter&)>;

// Paints `paint`, which draws a `size` picture in widget pixels, into the bytes
// of a file in `format`.
QByteArray render(QSize size, ExportFormat format, const QColor& background,
                  const Painting& paint) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (format == ExportFormat::svg) {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setResolution(kScreenDpi);
        svg.setTitle(QStringLiteral("Pipewright Studio"));
        QCPPainter painter(&svg);
        painter.setMode(QCPPainter::pmVectorized);
        painter.fillRect(QRect(QPoint(0, 0), size), background);
        paint(painter);
    } else if (format == ExportFormat::pdf) {
        QPdfWriter pdf(&buffer);
        pdf.setCreator(QStringLiteral("Pipewright Studio"));
        pdf.setResolution(kScreenDpi);
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setPageSize(QPageSize(QSizeF(size) * 72.0 / kScreenDpi, QPageSize::Point, QString(),
                                  QPageSize::ExactMatch));
        QCPPainter painter(&pdf);
        painter.setMode(QCPPainter::pmVectorized);
        painter.fillRect(QRect(QPoint(0, 0), size), background);
        paint(painter);
    } else {
        QImage image(size * kPngScale, QImage::Format_ARGB32);
        image.setDevicePixelRatio(1);
        image.fill(background);
        {
            QCPPainter painter(&image);
            painter.scale(kPngScale, kPngScale);
            paint(painter);
        }
        image.save(&buffer, "PNG");
    }
    return bytes;
}

void paint_plot(QCPPainter& painter, QCustomPlot* plot) {
    plot->toPainter(&painter, plot->width(), plot->height());
}

// Every visible widget under `widget`, at `offset` plus its place: plots as
// vectors through QCustomPlot, the rest (labels, frames) as Qt paints them.
void paint_children(QCPPainter& painter, QWidget* widget, QPoint offset) {
    for (QObject* object : widget->children()) {
        auto* child = qobject_cast<QWidget*>(object);
        if (child == nullptr || child->isWindow() || !child->isVisibleTo(widget)) {
            continue;
        }
        const QPoint at = offset + child->pos();
        auto* plot = qobject_cast<QCustomPlot*>(child);
        if (plot == nullptr &&
            !child->findChildren<QWidget*>(Qt::FindDirectChildrenOnly).isEmpty()) {
            paint_children(painter, child, at);
            continue;
        }
        painter.save();
        painter.translate(at);
        if (plot != nullptr) {
            paint_plot(painter, plot);
        } else {
            child->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
        }
        painter.restore();
    }
}

}  // namespace

QByteArray render_plot(QCustomPlot* plot, ExportFormat format) {
    return render(plot->size(), format, plot->palette().color(QPalette::Base),
                  [plot](QCPPainter& painter) { paint_plot(painter, plot); });
}

QByteArray render_widgets(QWidget* area, ExportFormat format) {
    return render(area->size(), format, area->palette().color(QPalette::Window),
                  [area](QCPPainter& painter) { paint_children(painter, area, QPoint(0, 0)); });
}

bool write_export(const QString& path, const QByteArray& data, QString* error) {
    if (data.isEmpty()) {
        *error = QStringLiteral("nothing was drawn");
        return false;
    }
    try {
        write_file_atomically(path.toStdString(), data.toStdString());
        return true;
    } catch (const std::exception& e) {
        *error = QString::fromStdString(e.what());
        return false;
    }
}

}  // namespace pipewright::gui
