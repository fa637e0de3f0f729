#pragma once

#include <QListView>

#include "pipewright/core/diagnostics.h"

namespace pipewright::gui {

class ProblemListModel;

// Every problem of the project, with the JSON path that locates it; clicking
// one asks the window to select the item it names.
class ProblemsPanel : public QListView {
    Q_OBJECT

  public:
    explicit ProblemsPanel(QWidget* parent = nullptr);

    void setProblems(const Diagnostics& problems);
    [[nodiscard]] int count() const;
    [[nodiscard]] ProblemListModel* problems() const { return model_; }

  signals:
    void problemActivated(const QString& path);

  private:
    ProblemListModel* model_ = nullptr;
};

}  // namespace pipewright::gui
