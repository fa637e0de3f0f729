#pragma once

#include <cstdint>
#include <memory>

#include "pipewright/core/device_catalog.h"
#include "pipewright/core/profile.h"
#include "pipewright/sim/cost_model.h"

// What the studio prices its simulations, plans and comparisons with, as
// `--profile`, `--calibration` and `--memory-margin` do on the command line:
// the project's measured profile (Profile this machine, on the Run tab) and
// the catalog with the device calibrations chosen (Simulation ▸ Device
// Calibrations…) and the memory every GPU keeps free.
namespace pipewright::gui {

struct StudioCosts {
    // Not explicit: a profile alone is the common case.
    StudioCosts(std::shared_ptr<const Profile> measured = nullptr,
                std::shared_ptr<const DeviceCatalog> calibrated = nullptr)
        : profile(std::move(measured)), catalog(std::move(calibrated)) {}

    std::shared_ptr<const Profile> profile;        // null: the analytic estimate
    std::shared_ptr<const DeviceCatalog> catalog;  // null: the built-in catalog
    // What every GPU keeps free (Simulate ▸ Keep GPU Memory Free…), already
    // taken off `catalog`'s GPUs; 0: none, and the Memory figure cautions
    // instead where a GPU has less than NCCL's buffers to spare.
    std::int64_t memory_margin_bytes = 0;

    // Pointing into this object, which must outlive them.
    [[nodiscard]] CostModelOptions model_options() const {
        CostModelOptions o;
        o.profile = profile.get();
        return o;
    }
    [[nodiscard]] const DeviceCatalog* catalog_or_null() const { return catalog.get(); }

    bool operator==(const StudioCosts&) const = default;
};

}  // namespace pipewright::gui
