#pragma once

#include <QScrollArea>

#include "pipewright/core/project.h"

class QFormLayout;
class QLabel;

namespace pipewright::gui {

class ProjectDocument;

// What the inspector shows.
struct Selection {
    enum class Kind { none, layer, device, container, node } kind = Kind::none;
    int layer = -1;
    QString path;  // device "n/c/d", container "n/c" or node "n"

    bool operator==(const Selection&) const = default;
};

// The properties of the selection, edited in place: a layer's
// hyper-parameters, a device's spec and overrides, what a node or container
// holds and the link that joins its parts, and the cluster's link figures. Every change is an
// undoable edit of the document.
class Inspector : public QScrollArea {
    Q_OBJECT

  public:
    explicit Inspector(ProjectDocument* document, QWidget* parent = nullptr);

    void setSelection(const Selection& selection);
    [[nodiscard]] const Selection& selection() const { return selection_; }

  signals:
    void refused(const QString& message);

  private:
    void rebuild();
    void buildLayer(QFormLayout* form);
    void buildDevice(QFormLayout* form);
    void buildLinks(QFormLayout* form);
    // One link level's bandwidth and latency, edited in place (undoable).
    QWidget* linkEditor(LinkSpec LinkClasses::*member, const QString& name, const QString& tip);
    // inspector_topology.cpp: a node's and a container's page.
    void buildNode(QFormLayout* form);
    void buildContainer(QFormLayout* form);
    void addContents(QFormLayout* form, int node, int container);
    // inspector_sections.cpp: the optional and less common parts.
    void buildCost(QFormLayout* form);
    void addImportedRows(QFormLayout* form, const LayerSpec& layer);
    void buildModelInput(QFormLayout* form);
    void buildLinkOverrides(QFormLayout* form);
    // Records an edit from a continuous control without rebuilding the page,
    // so the control keeps its focus while it is being stepped.
    void editInPlace(const QString& text, const Project& after, int mergeId);

    // Consecutive steps of one field merge into one undo step; different
    // fields do not.
    static int mergeIdOf(const QString& field);
    static QLabel* heading(const QString& text);

    ProjectDocument* document_;
    Selection selection_;
    bool editing_ = false;  // our own edit: keep the widgets (and focus)
};

}  // namespace pipewright::gui
