#include "editor/layer_palette.h"

#include <algorithm>

#include <QHeaderView>
#include <QMimeData>
#include <QStyle>

#include "editor/model_table_model.h"
#include "pipewright/core/layer_catalog.h"
#include "studio_core/project/layer_blocks.h"

namespace pipewright::gui {

namespace {
constexpr int kEntryRole = Qt::UserRole + 1;
}

LayerPalette::LayerPalette(QWidget* parent) : QTreeWidget(parent) {
    setHeaderHidden(true);
    setColumnCount(1);
    setDragEnabled(true);
    setDragDropMode(QAbstractItemView::DragOnly);
    setRootIsDecorated(true);
    setToolTip(tr("Drag into the model or onto a device; double-click to append"));

    auto* layers = new QTreeWidgetItem(this, {tr("Layers")});
    layers->setFlags(Qt::ItemIsEnabled);
    for (const LayerTypeInfo& info : layer_types()) {
        auto* item = new QTreeWidgetItem(layers, {QString::fromStdString(info.type)});
        item->setData(0, kEntryRole,
                      QStringLiteral("layer:%1").arg(QString::fromStdString(info.type)));
        QString tip = QString::fromStdString(info.description);
        for (const ParamSpec& p : info.params) {
            tip += QStringLiteral("\n  %1%2: %3")
                       .arg(QString::fromStdString(p.name),
                            p.required ? QStringLiteral(" *") : QString(),
                            QString::fromStdString(p.description));
        }
        if (std::any_of(info.params.begin(), info.params.end(),
                        [](const ParamSpec& p) { return p.required; })) {
            tip += tr("\n(* required: the file must give it; the others have defaults)");
        }
        item->setToolTip(0, tip);
    }
    auto* blocks = new QTreeWidgetItem(this, {tr("Blocks")});
    blocks->setFlags(Qt::ItemIsEnabled);
    for (const BlockInfo& block : layer_blocks()) {
        auto* item = new QTreeWidgetItem(blocks, {QString::fromStdString(block.title)});
        item->setData(0, kEntryRole,
                      QStringLiteral("block:%1").arg(QString::fromStdString(block.name)));
        item->setToolTip(0, QString::fromStdString(block.description));
    }
    expandAll();
    connect(this, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item) {
        const QString entry = item->data(0, kEntryRole).toString();
        if (!entry.isEmpty()) {
            emit entryActivated(entry);
        }
    });
}

QSize LayerPalette::minimumSizeHint() const {
    constexpr int kSlack = 4;  // the item's own margins in some styles
    return {sizeHintForColumn(0) + 2 * frameWidth() +
                style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this) + kSlack,
            QTreeWidget::minimumSizeHint().height()};
}

QStringList LayerPalette::mimeTypes() const {
    return {QString::fromLatin1(kPaletteMime)};
}

QMimeData* LayerPalette::mimeData(const QList<QTreeWidgetItem*>& items) const {
    if (items.isEmpty() || items.front()->data(0, kEntryRole).toString().isEmpty()) {
        return nullptr;
    }
    auto* mime = new QMimeData;
    mime->setData(QString::fromLatin1(kPaletteMime),
                  items.front()->data(0, kEntryRole).toString().toLatin1());
    return mime;
}

}  // namespace pipewright::gui
