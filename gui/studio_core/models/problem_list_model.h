#pragma once

#include <QAbstractListModel>
#include <vector>

#include "pipewright/core/diagnostics.h"

namespace pipewright::gui {

// The project's problems, one row each: "path: message" to read, the JSON
// path (PathRole) for the window to select what it names.
class ProblemListModel : public QAbstractListModel {
    Q_OBJECT

  public:
    static constexpr int PathRole = Qt::UserRole;

    explicit ProblemListModel(QObject* parent = nullptr);

    void setProblems(const Diagnostics& problems);
    // What each row shows beside its text (a warning icon): the view's
    // business, passed in so that the model needs no widgets.
    void setDecoration(const QVariant& decoration);

    [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;

  private:
    std::vector<Diagnostic> problems_;
    QVariant decoration_;
};

}  // namespace pipewright::gui
