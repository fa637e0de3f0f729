#pragma once

#include <QDialog>
#include <QProcess>

#include "studio_core/processes/import_request.h"

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace pipewright::gui {

// File ▸ Import TorchScript…: the options of `pipewright import`, a preview
// of the layers the module splits into (the command line run with
// --dry-run), and Import, which writes the project; projectFile() is then
// the file to open.
class ImportDialog : public QDialog {
    Q_OBJECT

  public:
    ImportDialog(QString cli, QString start_folder, QWidget* parent = nullptr);

    [[nodiscard]] QString projectFile() const;
    // The request the fields make (tests fill the fields, then read this).
    [[nodiscard]] ImportRequest request() const;

  public slots:
    void preview();
    void runImport();

  signals:
    void previewShown(int layers);
    void failed(const QString& message);

  private:
    // The dialog's parts, each a few rows of the form; the module's returns
    // its Browse button (last in the tab order), the buttons' Preview.
    QPushButton* addModuleFields(QFormLayout* form);
    void addDeviceFields(QFormLayout* form);
    void addTrainingFields(QFormLayout* form);
    void addPreview();
    QPushButton* addButtons(QDialogButtonBox* buttons);
    void start(bool preview);
    void finished(int code, QProcess::ExitStatus status);
    // A module's layers in the table, with how evenly the stages share them.
    void showLayers(const ImportPreview& preview);
    void showError(const QString& message);
    // A config (.json) or a module: the fields only one of them takes.
    void moduleKindChanged();

    QString cli_;
    QString start_folder_;
    QLineEdit* module_ = nullptr;
    QLineEdit* shape_ = nullptr;
    QComboBox* dtype_ = nullptr;
    QComboBox* loss_ = nullptr;
    QSpinBox* depth_ = nullptr;
    QSpinBox* devices_ = nullptr;
    QSpinBox* nodes_ = nullptr;
    QSpinBox* seq_len_ = nullptr;
    QComboBox* spec_ = nullptr;
    QSpinBox* batch_ = nullptr;
    QSpinBox* microbatches_ = nullptr;
    QSpinBox* vocabulary_ = nullptr;
    QCheckBox* fresh_ = nullptr;
    QLineEdit* out_ = nullptr;
    QTableWidget* table_ = nullptr;
    QLabel* status_ = nullptr;
    QPushButton* import_ = nullptr;
    QProcess* process_ = nullptr;
    bool previewing_ = false;
};

}  // namespace pipewright::gui
