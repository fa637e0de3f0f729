#pragma once

#include <QAbstractTableModel>
#include <QSet>
#include <optional>
#include <vector>

#include "pipewright/core/layer_catalog.h"
#include "pipewright/core/project.h"

namespace pipewright::gui {

class ProjectDocument;

// Mime types of the studio's drags.
inline constexpr const char* kLayersMime = "application/x-pipewright-layers";  // "first,last"
inline constexpr const char* kPaletteMime =
    "application/x-pipewright-palette";  // "layer:T"/"block:N"

// Analysis of each layer of a model alone (shapes chain from the input), so
// the table shows sizes even while the placement is still incomplete.
struct LayerFigures {
    std::optional<LayerAnalysis> analysis;
    int dtype_bytes = 4;
    QString problem;
};
[[nodiscard]] std::vector<LayerFigures> analyze_model_layers(const Project& project);

// The model's layers in order, one row each. Name, type and device are edited
// in place; every change goes through the document as an undoable edit.
class ModelTableModel : public QAbstractTableModel {
    Q_OBJECT

  public:
    enum Column { Name, Type, OutputShape, Params, Flops, Activation, Device, ColumnCount };

    explicit ModelTableModel(ProjectDocument* document, QObject* parent = nullptr);

    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;
    [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;

    [[nodiscard]] QStringList mimeTypes() const override;
    [[nodiscard]] QMimeData* mimeData(const QModelIndexList& indexes) const override;
    [[nodiscard]] Qt::DropActions supportedDropActions() const override;
    [[nodiscard]] Qt::DropActions supportedDragActions() const override;
    bool canDropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                         const QModelIndex& parent) const override;
    bool dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                      const QModelIndex& parent) override;

    // Layers whose rows are tinted as problems (indices into the model).
    void setProblemRows(const QSet<int>& rows);

  signals:
    // An edit the rules do not allow, with the reason.
    void refused(const QString& message);
    // A palette entry was dropped at `row` (the main window builds the layers).
    void paletteDropped(const QString& entry, int row);

  private:
    void reload();

    ProjectDocument* document_;
    std::vector<LayerFigures> figures_;
    std::vector<int> stages_;
    std::vector<std::string> devices_;
    QSet<int> problem_rows_;
    int rows_ = 0;
};

}  // namespace pipewright::gui
