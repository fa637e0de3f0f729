#pragma once

#include <QString>
#include <QStringList>

namespace pipewright::gui {

// Where the studio looks for the `pipewright` command line, which it starts
// for real runs (the studio itself never links LibTorch).
struct CliSearch {
    QString env_value;      // $PIPEWRIGHT_CLI, empty when unset
    QString app_dir;        // folder of the running studio executable
    QStringList path_dirs;  // the folders of $PATH, in order
};

// The search the running studio makes: its environment and its own folder.
[[nodiscard]] CliSearch current_cli_search();

struct CliLocation {
    QString path;    // absolute path of the executable; empty when not found
    QString reason;  // why it was not found, in words for a tooltip
    [[nodiscard]] bool found() const { return !path.isEmpty(); }
};

// $PIPEWRIGHT_CLI when set (and then only it: a wrong value is reported, not
// silently replaced), else `pipewright` next to the studio (installed: both in
// bin/), else the build tree (build/gui/pipewright-studio beside
// build/cli/pipewright), else the first one on $PATH.
[[nodiscard]] CliLocation locate_cli(const CliSearch& search);
[[nodiscard]] CliLocation locate_cli();

}  // namespace pipewright::gui
