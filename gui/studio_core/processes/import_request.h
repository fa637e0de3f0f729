#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <vector>

namespace pipewright::gui {

// What File ▸ Import… asks `pipewright import` for.
struct ImportRequest {
    QString cli;          // the pipewright executable
    QString module;       // the TorchScript file, or a Hugging Face config (.json)
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
    int nodes = 1;               // a config's nodes, of `devices` each
    int seq_len = 0;             // a config's sequence; 0: the command line chooses
    QString out;                 // the project file to write

    // A Hugging Face config rather than a module: a .json file.
    [[nodiscard]] bool is_config() const;
};

// The arguments of `pipewright import`: with `preview`, --dry-run --json
// (the layers found, nothing written); otherwise writing `out`.
[[nodiscard]] QStringList import_arguments(const ImportRequest& request, bool preview);

// The project file suggested for a module: beside it, with .json; for a
// config, beside it with -project.json.
[[nodiscard]] QString suggested_project_file(const QString& module);

struct ImportPreviewLayer {
    QString name;
    QString module;  // "AdaptiveAvgPool2d, then flatten"
    QString output;  // "[16]"
    qint64 parameters = 0;
    double forward_flops = 0;  // per sample
    int stage = -1;            // where the import placed it (-1: not said)
};

struct ImportPreview {
    std::vector<ImportPreviewLayer> layers;
    // A config's preview: what it describes, in a sentence, and what the
    // project leaves out.
    QString summary;
    QStringList notes;
    QStringList kept_whole;
    int stages = 0;
    QString error;  // set when the output is not the JSON `import --json` prints
};

// The command line's words for the dialog's fields, in a message the
// import printed: "check --input-shape and --input-dtype" becomes "check
// Input shape and Input type", the fields the user can change.
[[nodiscard]] QString in_dialog_words(QString message);

// Reads what `pipewright import --dry-run --json` printed.
[[nodiscard]] ImportPreview parse_import_preview(const QByteArray& json);

}  // namespace pipewright::gui
