#include "editor/model_table_model.h"

#include <QBrush>
#include <QMimeData>

#include "document/project_document.h"
#include "studio_core/format/format.h"
#include "studio_core/project/project_edit.h"
#include "style/colors.h"

namespace pipewright::gui {

std::vector<LayerFigures> analyze_model_layers(const Project& project) {
    std::vector<LayerFigures> out;
    Shape shape = project.model.input.shape;
    DType dtype = project.model.input.dtype;
    bool chained = true;
    for (std::size_t i = 0; i < project.model.layers.size(); ++i) {
        LayerFigures f;
        f.dtype_bytes = dtype_bytes(project.training.dtype);
        if (chained) {
            Diagnostics d;
            f.analysis = analyze_layer(project.model.layers[i], shape, dtype, d,
                                       "model.layers[" + std::to_string(i) + "]");
            if (f.analysis) {
                shape = f.analysis->output_shape;
                dtype = f.analysis->output_dtype;
            } else {
                chained = false;
                f.problem = QString::fromStdString(d.format()).trimmed();
            }
        } else {
            f.problem = QObject::tr("input unknown: a layer before this one has a problem");
        }
        out.push_back(std::move(f));
    }
    return out;
}

ModelTableModel::ModelTableModel(ProjectDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
    connect(document_, &ProjectDocument::projectChanged, this, &ModelTableModel::reload);
    reload();
}

void ModelTableModel::reload() {
    const Project& p = document_->project();
    const int rows = static_cast<int>(p.model.layers.size());
    const bool reshaped = rows != rows_;
    if (reshaped) {
        beginResetModel();
    }
    figures_ = analyze_model_layers(p);
    stages_ = layer_stages(p);
    devices_ = layer_devices(p);
    rows_ = rows;
    if (reshaped) {
        endResetModel();
    } else if (rows > 0) {
        emit dataChanged(index(0, 0), index(rows - 1, ColumnCount - 1));
    }
}

void ModelTableModel::setProblemRows(const QSet<int>& rows) {
    problem_rows_ = rows;
    if (rows_ > 0) {
        emit dataChanged(index(0, 0), index(rows_ - 1, ColumnCount - 1), {Qt::BackgroundRole});
    }
}

int ModelTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : rows_;
}

int ModelTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ModelTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rows_) {
        return {};
    }
    const auto row = static_cast<std::size_t>(index.row());
    const LayerSpec& layer = document_->project().model.layers[row];
    const LayerFigures& f = figures_[row];
    if (role == Qt::DisplayRole || role == Qt::EditRole) {
        switch (index.column()) {
            case Name:
                return QString::fromStdString(layer.name);
            case Type:
                if (layer.type == "torchscript" && role == Qt::DisplayRole) {
                    // The class it was imported from says more than the type.
                    const auto& cls = layer.params.value("module_type", nlohmann::json());
                    if (cls.is_string()) {
                        return tr("%1 (TorchScript)")
                            .arg(QString::fromStdString(cls.get<std::string>()));
                    }
                }
                return QString::fromStdString(layer.type);
            case OutputShape:
                return f.analysis ? QString::fromStdString(to_string(f.analysis->output_shape))
                                  : QStringLiteral("?");
            case Params:
                return f.analysis ? format_count(static_cast<double>(f.analysis->parameters))
                                  : QString();
            case Flops:
                return f.analysis ? format_count(f.analysis->forward_flops) : QString();
            case Activation:
                return f.analysis ? format_bytes(f.analysis->output_elements * f.dtype_bytes)
                                  : QString();
            case Device:
                return QString::fromStdString(devices_[row]);
            default:
                return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        if (!f.problem.isEmpty()) {
            return f.problem;
        }
        if (index.column() == Flops) {
            return tr("Forward FLOPs per sample (a multiply-add counts as two)");
        }
        if (index.column() == Activation) {
            return tr("Output tensor per sample, in the training dtype");
        }
        if (index.column() == Device) {
            return devices_[row].empty()
                       ? tr("Not placed: drag it onto a device")
                       : tr("Stage %1 · double-click to pick another device").arg(stages_[row]);
        }
        if (index.column() == Type && layer.type == "torchscript") {
            const auto text = [&](const char* key) {
                const auto& v = layer.params.value(key, nlohmann::json());
                return QString::fromStdString(v.is_string() ? v.get<std::string>() : "");
            };
            return tr("Submodule \"%1\" of %2, imported with pipewright import: run as the "
                      "file has it (import the file again to change it)")
                .arg(text("submodule"), text("module"));
        }
        if (index.column() == Type) {
            return tr(
                "Double-click to pick another type: the hyper-parameters restart from "
                "the catalog");
        }
        return {};
    }
    if (role == Qt::BackgroundRole) {
        if (problem_rows_.contains(index.row()) || !f.problem.isEmpty()) {
            QColor c = warning_color();
            c.setAlpha(60);
            return QBrush(c);
        }
        if (index.column() == Device) {
            QColor c = stage_color(stages_[row]);
            c.setAlpha(140);
            return QBrush(c);
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole && index.column() >= Params && index.column() <= Activation) {
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant ModelTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole) {
        return {};
    }
    if (orientation == Qt::Vertical) {
        return section;
    }
    switch (section) {
        case Name:
            return tr("Name");
        case Type:
            return tr("Type");
        case OutputShape:
            return tr("Output shape");
        case Params:
            return tr("Params");
        case Flops:
            return tr("FLOPs");
        case Activation:
            return tr("Activation");
        case Device:
            return tr("Device");
        default:
            return {};
    }
}

Qt::ItemFlags ModelTableModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags f = QAbstractTableModel::flags(index) | Qt::ItemIsDropEnabled;
    if (!index.isValid()) {
        return f;
    }
    f |= Qt::ItemIsDragEnabled;
    const auto& layers = document_->project().model.layers;
    const auto row = static_cast<std::size_t>(index.row());
    const bool imported = row < layers.size() && layers[row].type == "torchscript";
    if (index.column() == Name || index.column() == Device ||
        (index.column() == Type && !imported)) {
        f |= Qt::ItemIsEditable;
    }
    return f;
}

bool ModelTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::EditRole) {
        return false;
    }
    const std::string text = value.toString().trimmed().toStdString();
    const Project& p = document_->project();
    EditResult result;
    QString what;
    if (index.column() == Name) {
        result = rename_layer(p, index.row(), text);
        what = tr("Rename layer");
    } else if (index.column() == Type) {
        // The layer is refitted to the shape that reaches it, so the new type
        // starts from numbers that fit where they can.
        const auto row = static_cast<std::size_t>(index.row());
        Shape input = p.model.input.shape;
        if (row > 0 && figures_[row - 1].analysis) {
            input = figures_[row - 1].analysis->output_shape;
        }
        if (text == p.model.layers[row].type) {
            return false;
        }
        result = change_layer_type(p, index.row(), text, input);
        what = tr("Change layer type");
    } else if (index.column() == Device) {
        result = place_layers(p, index.row(), index.row(), text);
        what = tr("Place layer");
    } else {
        return false;
    }
    if (!result.project) {
        emit refused(QString::fromStdString(result.refusal));
        return false;
    }
    document_->edit(what, *result.project);
    return true;
}

QStringList ModelTableModel::mimeTypes() const {
    return {QString::fromLatin1(kLayersMime), QString::fromLatin1(kPaletteMime)};
}

QMimeData* ModelTableModel::mimeData(const QModelIndexList& indexes) const {
    int first = -1;
    int last = -1;
    for (const QModelIndex& i : indexes) {
        first = first < 0 ? i.row() : std::min(first, i.row());
        last = std::max(last, i.row());
    }
    if (first < 0) {
        return nullptr;
    }
    auto* mime = new QMimeData;
    mime->setData(QString::fromLatin1(kLayersMime),
                  QStringLiteral("%1,%2").arg(first).arg(last).toLatin1());
    return mime;
}

Qt::DropActions ModelTableModel::supportedDropActions() const {
    return Qt::MoveAction | Qt::CopyAction;
}

Qt::DropActions ModelTableModel::supportedDragActions() const {
    return Qt::MoveAction;
}

bool ModelTableModel::canDropMimeData(const QMimeData* data, Qt::DropAction, int, int,
                                      const QModelIndex&) const {
    return data->hasFormat(QString::fromLatin1(kLayersMime)) ||
           data->hasFormat(QString::fromLatin1(kPaletteMime));
}

bool ModelTableModel::dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int,
                                   const QModelIndex& parent) {
    if (action == Qt::IgnoreAction) {
        return true;
    }
    int target = row >= 0 ? row : parent.isValid() ? parent.row() : rows_;
    if (data->hasFormat(QString::fromLatin1(kPaletteMime))) {
        emit paletteDropped(QString::fromLatin1(data->data(QString::fromLatin1(kPaletteMime))),
                            target);
        return true;
    }
    const QStringList range =
        QString::fromLatin1(data->data(QString::fromLatin1(kLayersMime))).split(QLatin1Char(','));
    if (range.size() != 2) {
        return false;
    }
    const int first = range[0].toInt();
    const int last = range[1].toInt();
    if (target >= first && target <= last + 1) {
        return false;  // dropped onto itself
    }
    Project p = document_->project();
    // Move the range one layer at a time, keeping its order.
    if (target > last) {
        for (int i = first; i <= last; ++i) {
            p = move_layer(p, first, target - 1);
        }
    } else {
        for (int i = first; i <= last; ++i) {
            p = move_layer(p, i, target + (i - first));
        }
    }
    document_->edit(tr("Reorder layers"), p);
    // The view must not remove the dragged rows: the edit already moved them.
    return false;
}

}  // namespace pipewright::gui
