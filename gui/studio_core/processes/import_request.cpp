#include "studio_core/processes/import_request.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <utility>

namespace pipewright::gui {

bool ImportRequest::is_config() const {
    return module.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive);
}

QStringList import_arguments(const ImportRequest& r, bool preview) {
    if (r.is_config()) {
        QStringList args{QStringLiteral("import"),        r.module,
                         QStringLiteral("--devices"),     QString::number(r.devices),
                         QStringLiteral("--nodes"),       QString::number(r.nodes),
                         QStringLiteral("--device-spec"), r.device_spec,
                         QStringLiteral("--batch-size"),  QString::number(r.batch_size)};
        if (r.microbatches > 0) {
            args << QStringLiteral("--microbatches") << QString::number(r.microbatches);
        }
        if (r.seq_len > 0) {
            args << QStringLiteral("--seq-len") << QString::number(r.seq_len);
        }
        args << (preview ? QStringList{QStringLiteral("--dry-run"), QStringLiteral("--json")}
                         : QStringList{QStringLiteral("--out"), r.out});
        return args;
    }
    QStringList args{QStringLiteral("import"),        r.module,
                     QStringLiteral("--input-shape"), r.input_shape,
                     QStringLiteral("--input-dtype"), r.input_dtype,
                     QStringLiteral("--loss"),        r.loss,
                     QStringLiteral("--depth"),       QString::number(r.depth),
                     QStringLiteral("--devices"),     QString::number(r.devices),
                     QStringLiteral("--device-spec"), r.device_spec,
                     QStringLiteral("--batch-size"),  QString::number(r.batch_size)};
    if (r.microbatches > 0) {
        args << QStringLiteral("--microbatches") << QString::number(r.microbatches);
    }
    if (r.vocabulary > 0 && r.input_dtype == QStringLiteral("int64")) {
        args << QStringLiteral("--vocabulary") << QString::number(r.vocabulary);
    }
    if (r.fresh_weights) {
        args << QStringLiteral("--init") << QStringLiteral("seed");
    }
    if (preview) {
        args << QStringLiteral("--dry-run") << QStringLiteral("--json");
    } else {
        args << QStringLiteral("--out") << r.out;
    }
    return args;
}

QString suggested_project_file(const QString& module) {
    if (module.isEmpty()) {
        return {};
    }
    const QFileInfo info(module);
    const bool config = module.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive);
    return info.dir().filePath(info.completeBaseName() + (config ? QStringLiteral("-project.json")
                                                                 : QStringLiteral(".json")));
}

ImportPreview parse_import_preview(const QByteArray& json) {
    ImportPreview out;
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (!doc.isObject() || (!doc.object().value(QStringLiteral("layers")).isArray() &&
                            !doc.object().contains(QStringLiteral("architecture")))) {
        out.error = QStringLiteral("the command line printed no list of layers");
        return out;
    }
    const QJsonObject root = doc.object();
    if (root.contains(QStringLiteral("architecture"))) {
        const int stages = root.value(QStringLiteral("stages")).toInt();
        out.summary = QStringLiteral(
                          "%1: %2 blocks, %3 parameters, sequence %4; placed as %5; "
                          "simulated %6 s an iteration%7.")
                          .arg(root.value(QStringLiteral("architecture")).toString())
                          .arg(root.value(QStringLiteral("blocks")).toInteger())
                          .arg(QLocale().toString(static_cast<qint64>(
                              root.value(QStringLiteral("parameters")).toDouble())))
                          .arg(root.value(QStringLiteral("sequence")).toInteger())
                          .arg(stages == 1 ? QStringLiteral("one stage")
                                           : QStringLiteral("%1 stages").arg(stages))
                          .arg(root.value(QStringLiteral("iteration_s")).toDouble(), 0, 'g', 3)
                          .arg(root.value(QStringLiteral("fits")).toBool()
                                   ? QStringLiteral(", every device fits")
                                   : QStringLiteral(", but not every device fits"));
        for (const auto& v : root.value(QStringLiteral("notes")).toArray()) {
            out.notes << v.toString();
        }
        out.stages = root.value(QStringLiteral("stages")).toInt();
        return out;
    }
    for (const auto& v : root.value(QStringLiteral("layers")).toArray()) {
        const QJsonObject l = v.toObject();
        ImportPreviewLayer layer;
        layer.name = l.value(QStringLiteral("name")).toString();
        layer.module = l.value(QStringLiteral("module_type")).toString();
        QStringList then;
        for (const auto& op : l.value(QStringLiteral("then")).toArray()) {
            then << op.toString();
        }
        if (!then.isEmpty()) {
            layer.module += QStringLiteral(", then ") + then.join(QStringLiteral(", "));
        }
        QStringList dims;
        for (const auto& d : l.value(QStringLiteral("output_shape")).toArray()) {
            dims << QString::number(d.toInteger());
        }
        layer.output = QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
        layer.parameters = l.value(QStringLiteral("parameters")).toInteger();
        layer.forward_flops = l.value(QStringLiteral("forward_flops")).toDouble();
        layer.stage = l.value(QStringLiteral("stage")).toInt(-1);
        out.layers.push_back(layer);
    }
    for (const auto& v : root.value(QStringLiteral("kept_whole")).toArray()) {
        out.kept_whole << v.toString();
    }
    out.stages = root.value(QStringLiteral("stages")).toInt();
    return out;
}

QString in_dialog_words(QString message) {
    // Longest first: "--input-shape" before a shorter flag it contains.
    static const std::pair<const char*, const char*> fields[] = {
        {"--input-shape", "Input shape"},
        {"--input-dtype", "Input type"},
        {"--device-spec", "the device type"},
        {"--microbatches", "micro-batches"},
        {"--batch-size", "Batch size"},
        {"--vocabulary", "Vocabulary"},
        {"--seq-len", "Sequence"},
        {"--devices", "Devices"},
        {"--nodes", "Devices (nodes)"},
        {"--depth", "Depth"},
        {"--loss", "Loss"},
        {"--init", "Weights"},
        {"--out", "Project file"}};
    for (const auto& [flag, field] : fields) {
        message.replace(QLatin1String(flag), QCoreApplication::translate("ImportDialog", field));
    }
    return message;
}

}  // namespace pipewright::gui
