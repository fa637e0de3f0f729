#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <vector>

namespace pipewright::gui {

// What File ▸ Import TorchScript… asks `pipewright import` for.
struct ImportRequest {
    QString cli;          // the pipewright executable
    QString module;       // the TorchScript file
    QString input_shape;  // "3,224,224"
    QString input_dtype = QStringLiteral("float32");
    QString loss = QStringLiteral("cross_entropy");
    int depth = 0;
    int devices = 1;
    QString device_spec = QStringLiteral("cpu");
    int batch_size = 32;
    int microbatches = 0;        // 0: the command line chooses
    qint64 vocabulary = 0;       // 0: the model's first embedding
    bool fresh_weights = false;  // --init seed
    QString out;                 // the project file to write
};

// The arguments of `pipewright import`: with `preview`, --dry-run --json
// (the layers found, nothing written); otherwise writing `out`.
[[nodiscard]] QStringList import_arguments(const ImportRequest& request, bool preview);

// The project file suggested for a module: beside it, with .json.
[[nodiscard]] QString suggested_project_file(const QString& module);

struct ImportPreviewLayer {
    QString name;
    QString module;  // "AdaptiveAvgPool2d, then flatten"
    QString output;  // "[16]"
    qint64 parameters = 0;
};

struct ImportPreview {
    std::vector<ImportPreviewLayer> layers;
    QStringList kept_whole;
    int stages = 0;
    QString error;  // set when the output is not the JSON `import --json` prints
};

// Reads what `pipewright import --dry-run --json` printed.
[[nodiscard]] ImportPreview parse_import_preview(const QByteArray& json);

}  // namespace pipewright::gui
