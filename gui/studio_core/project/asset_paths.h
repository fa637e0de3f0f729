#pragma once

#include <QString>
#include <QStringList>

namespace pipewright::gui {

// Folders that may hold the shared assets (examples/), most preferred first:
// the installed data folder relative to the running program (bin/ ->
// share/pipewright, so an installed, packaged or unpacked tree finds its own
// copy wherever it lies), then the source tree's assets/ (a program run from
// its build folder), then pipewright/ under the XDG data folders
// ($XDG_DATA_HOME, $XDG_DATA_DIRS: /usr/local/share, /usr/share).
[[nodiscard]] QStringList asset_dir_candidates();
// The first candidate that has an examples/ folder, cleaned; empty when none
// does.
[[nodiscard]] QString assets_dir();
// Absolute paths of the example projects, sorted by name.
[[nodiscard]] QStringList example_projects();
// The project the studio opens when none is given; empty when there are no
// examples.
[[nodiscard]] QString default_example();
// The folder of the user guide (docs/, Markdown with its images): installed
// beside the program's tree (share/doc/pipewright/docs), then the source
// tree's docs/, then the XDG data folders; empty when none has studio.md.
[[nodiscard]] QString docs_dir();
// Whether `path` lies inside `dir` (both resolved through links; false when
// either does not exist).
[[nodiscard]] bool is_inside(const QString& path, const QString& dir);
// Whether `path` is one of the shipped assets (an example): the studio
// opens those as untitled copies and never writes beside them.
[[nodiscard]] bool is_shipped_asset(const QString& path);

}  // namespace pipewright::gui
