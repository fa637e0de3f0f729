#pragma once

#include <QString>

namespace pipewright::gui {

// The formats File ▸ Export writes.
// csv: the schedule as Pipewright lowers it; the torch_ ones as PyTorch's
// _load_csv reads them (its format="compute_only" and "compute_comms").
enum class ExportFormat {
    png,
    svg,
    pdf,
    chrome_trace,
    csv,
    torch_compute_only,
    torch_compute_comms
};

[[nodiscard]] QString export_extension(ExportFormat format);    // "png", "json"
[[nodiscard]] QString export_format_name(ExportFormat format);  // "PNG image"
// A file dialog filter: "PNG image (*.png)".
[[nodiscard]] QString export_filter(ExportFormat format);

// What becomes of the name a user typed in the save dialog of an export in
// `format`. A name without an extension gets the format's, as the save
// dialogs of most applications do ("timeline" → "timeline.svg"); so does a
// name whose dots are part of the name ("run.2024-05" → "run.2024-05.svg").
// A name that ends in another format's extension ("x.png" for SVG) is
// refused: the file would not be what its name says, and whether the user
// wanted the name or the format is theirs to say. `suggestion` then holds the
// name with the right extension ("x.svg"), for the dialog to offer again.
struct ExportPath {
    QString path;        // what to write; empty when refused
    QString refusal;     // why not, in a sentence
    QString suggestion;  // the refused name with the format's extension
};
[[nodiscard]] ExportPath resolve_export_path(const QString& chosen, ExportFormat format);

}  // namespace pipewright::gui
