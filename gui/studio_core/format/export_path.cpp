#include "studio_core/format/export_path.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <iterator>

namespace pipewright::gui {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("ExportPath", text);
}

// Extensions a user could mean as a format, ours and their usual spellings;
// a name ending in any other suffix keeps it as part of the name.
struct KnownExtension {
    const char* extension;
    const char* format;
};
const KnownExtension kKnown[] = {
    {"png", "a PNG image"},    {"svg", "an SVG image"},      {"svgz", "an SVG image"},
    {"pdf", "a PDF document"}, {"json", "a JSON file"},      {"csv", "a CSV table"},
    {"jpg", "a JPEG image"},   {"jpeg", "a JPEG image"},     {"gif", "a GIF image"},
    {"bmp", "a bitmap image"}, {"tif", "a TIFF image"},      {"tiff", "a TIFF image"},
    {"webp", "a WebP image"},  {"eps", "a PostScript file"}, {"ps", "a PostScript file"},
    {"txt", "a text file"},    {"html", "a web page"},
};

const KnownExtension* known_extension(const QString& suffix) {
    for (const auto& known : kKnown) {
        if (suffix.compare(QLatin1String(known.extension), Qt::CaseInsensitive) == 0) {
            return &known;
        }
    }
    return nullptr;
}

}  // namespace

QString export_extension(ExportFormat format) {
    switch (format) {
        case ExportFormat::png:
            return QStringLiteral("png");
        case ExportFormat::svg:
            return QStringLiteral("svg");
        case ExportFormat::pdf:
            return QStringLiteral("pdf");
        case ExportFormat::chrome_trace:
            return QStringLiteral("json");
        case ExportFormat::csv:
        case ExportFormat::torch_compute_only:
        case ExportFormat::torch_compute_comms:
            return QStringLiteral("csv");
    }
    return {};
}

QString export_format_name(ExportFormat format) {
    switch (format) {
        case ExportFormat::png:
            return tr("PNG image");
        case ExportFormat::svg:
            return tr("SVG image");
        case ExportFormat::pdf:
            return tr("PDF document");
        case ExportFormat::chrome_trace:
            return tr("Chrome trace");
        case ExportFormat::csv:
            return tr("PyTorch schedule CSV");
        case ExportFormat::torch_compute_only:
            return tr("PyTorch compute-only schedule CSV");
        case ExportFormat::torch_compute_comms:
            return tr("PyTorch lowered schedule CSV");
    }
    return {};
}

QString export_filter(ExportFormat format) {
    return QStringLiteral("%1 (*.%2)").arg(export_format_name(format), export_extension(format));
}

namespace {

QString with_article(ExportFormat format) {
    return (format == ExportFormat::svg ? tr("an %1") : tr("a %1")).arg(export_format_name(format));
}

}  // namespace

ExportPath resolve_export_path(const QString& chosen, ExportFormat format) {
    const QString extension = export_extension(format);
    const QFileInfo info(chosen);
    const QString suffix = info.suffix();
    if (info.fileName().isEmpty()) {
        return {{}, tr("No file name was given."), {}};
    }
    if (suffix.compare(extension, Qt::CaseInsensitive) == 0) {
        return {chosen, {}, {}};
    }
    const KnownExtension* other = known_extension(suffix);
    // A leading dot makes a hidden file's name (".png"), not an extension.
    if (other == nullptr || info.completeBaseName().isEmpty()) {
        return {chosen + QLatin1Char('.') + extension, {}, {}};
    }
    const QString suggestion = chosen.left(chosen.size() - suffix.size()) + extension;
    return {{},
            tr("“%1” names %2, but this export writes %3: save it as “%4”.")
                .arg(info.fileName(), QString::fromLatin1(other->format), with_article(format),
                     QFileInfo(suggestion).fileName()),
            suggestion};
}

}  // namespace pipewright::gui
