#pragma once

#include <QDateTime>
#include <QString>
#include <memory>
#include <optional>

#include "pipewright/core/model.h"
#include "pipewright/core/profile.h"

// The measured costs the studio keeps with a project: the profile that
// "Profile this machine" wrote with `pipewright profile`, beside the
// project's runs, so that it is found again when the project is reopened and
// the command line can use the same file (`simulate --profile FILE`).
namespace pipewright::gui {

// runs_dir/<model>.profile.json (runs_dir from runs_dir_for).
[[nodiscard]] QString profile_path_for(const QString& runs_dir, const QString& model_name);

struct MeasuredCosts {
    QString path;
    std::shared_ptr<const Profile> profile;
    QDateTime measured;  // when the file was written
};

// Reads the profile at `path`: nullopt with an empty `error` when there is no
// such file, nullopt with the reason (each problem with its JSON path) when it
// does not read.
[[nodiscard]] std::optional<MeasuredCosts> load_measured_costs(const QString& path, QString* error);

// "Measured on vm (CPU, 1 thread) at micro-batch sizes 1, 4 and 16, 3 Dec 2026 14:02:
// 7 of 7 layers and the transfers from the profile", with the profile's
// warnings for this model (another model's profile, layers it lacks) after it.
// `ranks`: the most processes a run of the project starts on one machine (0:
// not known), to warn when they need more threads than the profile's machine
// has.
[[nodiscard]] QString describe_measured_costs(const MeasuredCosts& costs, const Model& model,
                                              int ranks = 0);

// Whether the profile prices any layer of `model`; a profile of another
// model would only replace the links.
[[nodiscard]] bool measured_costs_fit(const MeasuredCosts& costs, const Model& model);

}  // namespace pipewright::gui
