#pragma once

#include <QString>
#include <QStringList>

namespace pipewright::gui {

// Folder with devices.json and examples/: next to an installed program
// (../share/pipewright), else the source tree's assets/ of the build. Empty
// when neither exists.
[[nodiscard]] QString assets_dir();
// Absolute paths of the example projects, sorted by name.
[[nodiscard]] QStringList example_projects();
// The project the studio opens when none is given.
[[nodiscard]] QString default_example();

}  // namespace pipewright::gui
