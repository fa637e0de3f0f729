#pragma once

#include <QString>
#include <QStringList>

class QFileDialog;
class QWidget;

// The studio's file dialogs. Qt's own dialog (what a desktop without a file
// chooser portal gets) opens as small as it can and cuts its Size, Type and
// Date columns to a few letters; these open it wide enough to read them.
namespace pipewright::gui {

// Sizes `dialog`'s detail columns to their contents (the name takes the
// rest) and the dialog to show them; nothing for a platform's own dialog.
void fit_file_dialog(QFileDialog& dialog, QWidget* parent);

// QFileDialog's static functions, with the dialog fitted. Empty: cancelled.
[[nodiscard]] QString open_file_name(QWidget* parent, const QString& caption, const QString& dir,
                                     const QString& filter);
[[nodiscard]] QStringList open_file_names(QWidget* parent, const QString& caption,
                                          const QString& dir, const QString& filter);
[[nodiscard]] QString save_file_name(QWidget* parent, const QString& caption,
                                     const QString& suggestion, const QString& filter);

}  // namespace pipewright::gui
