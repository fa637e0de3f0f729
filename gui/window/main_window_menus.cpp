// The window's own menus: View (the tabs, the docks and the theme),
// Simulate (comparisons here, the rest from the features' controllers) and
// Help (the guide, the keys and the about box). File and Edit are beside
// what they drive.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QPalette>
#include <QSettings>
#include <QStyleFactory>
#include <QTabWidget>

#include "document/project_document.h"
#include "metrics/comparison_panel.h"
#include "run/profile_controller.h"
#include "run/run_controller.h"
#include "studio_core/project/asset_paths.h"
#include "studio_core/simulation/simulation_runner.h"
#include "timeline/timeline_plot.h"
#include "topology/topology_view.h"
#include "window/export_controller.h"
#include "window/file_controller.h"
#include "window/help_window.h"
#include "window/main_window.h"
#include "window/plan_controller.h"

namespace pipewright::gui {

void MainWindow::buildActions() {
    exports_->buildMenu(files_->buildMenu(menuBar()));
    buildEditMenu();
    buildViewMenu();
    buildSimulateMenu();
    buildHelpMenu();
}

void MainWindow::buildViewMenu() {
    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Fit Timeline"), QKeySequence(Qt::Key_F), timeline_,
                    &TimelinePlot::fitToWindow);
    view->addAction(tr("&Timeline"), QKeySequence(Qt::CTRL | Qt::Key_1), this,
                    [this] { tabs_->setCurrentIndex(0); });
    view->addAction(tr("&Metrics"), QKeySequence(Qt::CTRL | Qt::Key_2), this,
                    [this] { tabs_->setCurrentIndex(1); });
    // "Com&parison": C belongs to View ▸ Cluster Canvas.
    view->addAction(tr("Com&parison"), QKeySequence(Qt::CTRL | Qt::Key_3), this,
                    [this] { tabs_->setCurrentIndex(2); });
    view->addAction(tr("&Run"), QKeySequence(Qt::CTRL | Qt::Key_4), this,
                    [this] { tabs_->setCurrentIndex(3); });
    dark_action_ = view->addAction(tr("&Dark Theme"));
    dark_action_->setCheckable(true);
    connect(dark_action_, &QAction::toggled, this, [this](bool on) { setDarkTheme(on); });
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        view->addAction(dock->toggleViewAction());
    }
}

void MainWindow::buildSimulateMenu() {
    QMenu* simulate = menuBar()->addMenu(tr("&Simulate"));
    simulate->addAction(tr("&Compare Schedules"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C),
                        this, [this] {
                            tabs_->setCurrentIndex(2);
                            comparison_->compare(document_->project(), baseDir(), runner_->costs());
                        });
    simulate->addAction(tr("Compare &Data × Pipeline Layouts"), this, [this] {
        tabs_->setCurrentIndex(2);
        comparison_->compareLayouts(document_->project(), baseDir(), runner_->costs());
    });
    plan_->addPlanAction(simulate);
    simulate->addSeparator();
    profile_->addCalibrationActions(simulate);
    simulate->addSeparator();
    run_->addRunAction(simulate, run_bar_);
}

void MainWindow::buildHelpMenu() {
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* guide = help->addAction(tr("&User Guide"), QKeySequence::HelpContents, this, [this] {
        if (help_window_ == nullptr) {
            help_window_ = new HelpWindow(docs_dir(), this);
        }
        help_window_->show();
        help_window_->raise();
    });
    guide->setObjectName(QStringLiteral("userGuideAction"));
    help->addAction(tr("&Keyboard and Mouse"), this, [this] {
        QMessageBox box(this);
        box.setWindowTitle(tr("Keyboard and mouse"));
        box.setTextFormat(Qt::RichText);
        box.setText(tr("<b>Menu shortcuts</b>") + shortcuts_table(menuBar()) +
                    tr("<b>Timeline</b><br>%1").arg(timeline_->toolTip()) +
                    tr("<br><br><b>Cluster canvas</b><br>%1").arg(view_->toolTip()));
        box.exec();
    });
    help->addSeparator();
    help->addAction(tr("&About Pipewright Studio"), this, [this] {
        QMessageBox::about(this, tr("About Pipewright Studio"),
                           tr("<b>Pipewright Studio</b><p>Plan, simulate and run pipeline "
                              "model-parallel training: place layers on devices, pick a schedule, "
                              "read the predicted timeline, bubbles, throughput and memory, then "
                              "train the same layout on the local devices and compare.</p>"));
    });
}

void MainWindow::setDarkTheme(bool dark) {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QPalette pal = QApplication::style()->standardPalette();
    if (dark) {
        pal.setColor(QPalette::Window, QColor(0x2B, 0x2E, 0x33));
        pal.setColor(QPalette::WindowText, QColor(0xE6, 0xE6, 0xE6));
        pal.setColor(QPalette::Base, QColor(0x1F, 0x22, 0x26));
        pal.setColor(QPalette::AlternateBase, QColor(0x27, 0x2A, 0x2F));
        pal.setColor(QPalette::Text, QColor(0xE6, 0xE6, 0xE6));
        pal.setColor(QPalette::Button, QColor(0x33, 0x37, 0x3D));
        pal.setColor(QPalette::ButtonText, QColor(0xE6, 0xE6, 0xE6));
        pal.setColor(QPalette::ToolTipBase, QColor(0x33, 0x37, 0x3D));
        pal.setColor(QPalette::ToolTipText, QColor(0xE6, 0xE6, 0xE6));
        pal.setColor(QPalette::Highlight, QColor(0x3D, 0x8E, 0xD8));
        pal.setColor(QPalette::HighlightedText, Qt::white);
        pal.setColor(QPalette::Mid, QColor(0x55, 0x5A, 0x60));
        pal.setColor(QPalette::Dark, QColor(0x18, 0x1A, 0x1D));
        pal.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
        // Disabled controls must look disabled on the dark background too.
        for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
            pal.setColor(QPalette::Disabled, role, QColor(0x80, 0x84, 0x8A));
        }
        pal.setColor(QPalette::Disabled, QPalette::Button, QColor(0x2E, 0x31, 0x36));
    }
    QApplication::setPalette(pal);
    if (dark_action_ != nullptr) {
        dark_action_->setChecked(dark);
    }
    QSettings().setValue(QStringLiteral("darkTheme"), dark);
    showProblems();  // redraws the canvas in the new colours
}

}  // namespace pipewright::gui
