#pragma once

// `run --data DIR`: training on a user's own samples instead of the
// synthetic task. DIR holds two tensors saved with PyTorch's torch.save:
//   inputs.pt   [N, ...model input shape]  (float, or int64 token ids)
//   targets.pt  [N, ...]: class ids (int64) of the output's positions for
//               cross_entropy, or values of the output's shape for mse.
// Step s takes the next B samples in order (B the global batch), wrapping
// around after N, cut into micro-batches, replica r's after the replicas
// before it: every rank that asks gets the same, as one process would.

#include <cstdint>
#include <filesystem>
#include <optional>

#include <torch/torch.h>

#include "pipewright/backend/data.h"
#include "pipewright/core/analysis.h"

namespace pipewright::backend {

// The tensor torch.save wrote to `file`. Its storage points into a
// read-only mapping of the file (kept alive by the storage itself), so
// nothing is copied and the pages are shared, through the page cache, with
// every other process reading the file: torch.save stores each record
// uncompressed and aligned. An archive laid out otherwise (a compressed
// entry, a record misaligned for its dtype) is read into this process's
// memory instead, as before. Throws BackendError in words: the file cannot
// be read, is not a torch.save file, holds something other than one tensor,
// is damaged or big-endian, or does not fit in memory.
[[nodiscard]] torch::Tensor load_saved_tensor(const std::filesystem::path& file);

class TensorData {
  public:
    // Which files a rank reads: the inputs for the first stage, the targets
    // for the last, both to check a folder (or for a rank with both).
    enum class Parts : std::uint8_t { both, inputs, targets };

    // Loads and checks the folder against the project; throws BackendError
    // naming the file and what does not fit. The files stay mapped (see
    // load_saved_tensor); float inputs and targets are converted to `dtype`
    // a batch at a time. A part not loaded is undefined in the batches.
    TensorData(const std::filesystem::path& folder, const AnalyzedProject& project,
               torch::Dtype dtype, Parts parts = Parts::both);

    [[nodiscard]] Batch batch(int step, int replica = 0) const;
    [[nodiscard]] std::int64_t samples() const;

  private:
    static torch::Tensor checked_inputs(const std::filesystem::path& file,
                                        const AnalyzedProject& project);
    static torch::Tensor checked_targets(const std::filesystem::path& file,
                                         const AnalyzedProject& project,
                                         std::optional<std::int64_t> samples);

    const AnalyzedProject* project_;
    torch::Dtype dtype_;
    torch::Tensor inputs_, targets_;  // as saved: the file's dtype, maybe a view
};

}  // namespace pipewright::backend
