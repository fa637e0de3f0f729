#include "window/recovery_prompt.h"

#include <QCoreApplication>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>

#include "document/document_autosave.h"
#include "window/main_window.h"

namespace pipewright::gui {

namespace {

QString tr(const char* text, int n = -1) {
    return QCoreApplication::translate("RecoveryPrompt", text, nullptr, n);
}

}  // namespace

bool offer_recovery(MainWindow& window, const QString& folder) {
    const std::vector<RecoveredProject> found = orphaned_recoveries(folder);
    if (found.empty()) {
        return false;
    }
    const RecoveredProject& newest = found.front();
    QMessageBox box(&window);
    box.setIcon(QMessageBox::Question);
    box.setWindowTitle(tr("Recover Unsaved Changes"));
    box.setText(
        newest.filePath.isEmpty()
            ? tr("Pipewright Studio ended without saving the untitled project %1.").arg(newest.name)
            : tr("Pipewright Studio ended without saving your changes to %1.")
                  .arg(newest.filePath));
    QString details =
        tr("They were autosaved %1. Recover them? Nothing has been written to your file: "
           "it changes only when you save.")
            .arg(QLocale().toString(newest.savedAt.toLocalTime(), QLocale::ShortFormat));
    if (found.size() > 1) {
        details += QStringLiteral("\n\n") +
                   tr("%n more project(s) left unsaved will be offered at the next start.",
                      static_cast<int>(found.size() - 1));
    }
    box.setInformativeText(details);
    QPushButton* recover = box.addButton(tr("&Recover"), QMessageBox::AcceptRole);
    QPushButton* discard = box.addButton(tr("&Discard"), QMessageBox::DestructiveRole);
    box.addButton(tr("&Later"), QMessageBox::RejectRole);
    recover->setObjectName(QStringLiteral("recover"));
    discard->setObjectName(QStringLiteral("discard"));
    box.setDefaultButton(recover);
    box.exec();
    if (box.clickedButton() == recover) {
        window.restoreRecovered(newest.project, newest.filePath, newest.baseDir);
        discard_recovery(newest);
        return true;
    }
    if (box.clickedButton() == discard) {
        discard_recovery(newest);
    }
    return false;
}

}  // namespace pipewright::gui
