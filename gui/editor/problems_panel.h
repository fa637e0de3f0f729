#pragma once

#include <QListWidget>

#include "pipewright/core/diagnostics.h"

namespace pipewright::gui {

// Every problem of the project, with the JSON path that locates it; clicking
// one asks the window to select the item it names.
class ProblemsPanel : public QListWidget {
    Q_OBJECT

  public:
    explicit ProblemsPanel(QWidget* parent = nullptr);

    void setProblems(const Diagnostics& problems);

  signals:
    void problemActivated(const QString& path);
};

}  // namespace pipewright::gui
