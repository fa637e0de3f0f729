#include "pipewright/backend/tensor_data.h"

#include <fstream>
#include <iterator>
#include <optional>

#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/machine_memory.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"
#include "zip_contents.h"

namespace pipewright::backend {
namespace {

std::string shape_text(c10::IntArrayRef sizes) {
    return to_string(Shape(sizes.begin(), sizes.end()));
}

torch::Tensor load_tensor(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        throw BackendError("--data: cannot read " + file.string() +
                           " (the folder needs inputs.pt and targets.pt, each written with "
                           "torch.save(tensor, path))");
    }
    // The bytes and the tensor made of them are both held for a moment:
    // twice the unpacked size must fit.
    check_unpacked_size(file, "--data: " + printable_name(file.string()),
                        static_cast<double>(available_memory_bytes()) / 2);
    const auto out_of_memory = [&file] {
        return BackendError("--data: out of memory reading " + printable_name(file.string()) +
                            " (this machine has " +
                            format_bytes(static_cast<double>(available_memory_bytes())) +
                            " available)");
    };
    torch::IValue value;
    try {
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                      std::istreambuf_iterator<char>());
        value = torch::pickle_load(bytes);
    } catch (const std::bad_alloc&) {
        throw out_of_memory();
    } catch (const std::exception& e) {
        std::string why = e.what();
        // LibTorch's allocator says so in words, not with bad_alloc.
        if (why.find("can't allocate memory") != std::string::npos ||
            why.find("not enough memory") != std::string::npos) {
            throw out_of_memory();
        }
        throw BackendError("--data: " + printable_name(file.string()) +
                           " is not a tensor saved with torch.save (" +
                           why.substr(0, why.find('\n')) + ")");
    }
    if (!value.isTensor()) {
        throw BackendError("--data: " + file.string() + " holds a " + value.tagKind() +
                           ", not one tensor; save it with torch.save(tensor, path)");
    }
    return value.toTensor().contiguous();
}

}  // namespace

TensorData::TensorData(const std::filesystem::path& folder, const AnalyzedProject& project,
                       torch::Dtype dtype, Parts parts)
    : project_(&project) {
    // A rank loads only what its stages read (the first stage the inputs,
    // the last the targets): a large folder is not held by every worker.
    // The launcher loads both, one after the other, to check them together.
    std::optional<std::int64_t> samples;
    if (parts != Parts::targets) {
        inputs_ = checked_inputs(folder / "inputs.pt", project, dtype);
        samples = inputs_.size(0);
    }
    if (parts != Parts::inputs) {
        targets_ = checked_targets(folder / "targets.pt", project, dtype, samples);
    }
}

std::int64_t TensorData::samples() const {
    return inputs_.defined() ? inputs_.size(0) : targets_.size(0);
}

torch::Tensor TensorData::checked_inputs(const std::filesystem::path& file,
                                         const AnalyzedProject& project, torch::Dtype dtype) {
    const auto& model = project.project.model;
    torch::Tensor inputs = load_tensor(file);
    const std::string inputs_file = printable_name(file.string());
    std::vector<std::int64_t> want{inputs.dim() > 0 ? inputs.size(0) : 0};
    want.insert(want.end(), model.input.shape.begin(), model.input.shape.end());
    if (inputs.dim() == 0 || inputs.size(0) == 0 || inputs.sizes().vec() != want) {
        throw BackendError("--data: " + inputs_file + " has shape " + shape_text(inputs.sizes()) +
                           "; it must be [N, " + to_string(model.input.shape).substr(1) +
                           " with N ≥ 1 samples");
    }
    const bool tokens = model.input.dtype == DType::int64;
    if (tokens != (inputs.scalar_type() == torch::kInt64)) {
        throw BackendError("--data: " + inputs_file + " holds " +
                           std::string(c10::toString(inputs.scalar_type())) + "; the model takes " +
                           (tokens ? "int64 token ids" : "floating-point values"));
    }
    if (tokens) {
        // An id past the embedding's table trains in silence under tensor
        // parallelism (each slice masks the ids it does not hold) and fails
        // deep inside a worker without it: refused here, before any starts.
        const std::int64_t vocabulary = input_vocabulary(model);
        const std::int64_t low = inputs.min().item<std::int64_t>();
        const std::int64_t high = inputs.max().item<std::int64_t>();
        if (vocabulary > 0 && (low < 0 || high >= vocabulary)) {
            throw BackendError("--data: " + inputs_file + " holds token ids from " +
                               std::to_string(low) + " to " + std::to_string(high) +
                               ", outside 0 to " + std::to_string(vocabulary - 1) +
                               " (the model's vocabulary of " + std::to_string(vocabulary) + ")");
        }
        return inputs;
    }
    if (inputs.is_complex() || inputs.scalar_type() == torch::kBool) {
        throw BackendError("--data: " + inputs_file + " holds " +
                           std::string(c10::toString(inputs.scalar_type())) +
                           " values; the model takes real numbers (float32 or float64)");
    }
    if (!inputs.is_floating_point()) {
        inputs = inputs.to(torch::kFloat32);
    }
    return inputs.to(dtype);
}

torch::Tensor TensorData::checked_targets(const std::filesystem::path& file,
                                          const AnalyzedProject& project, torch::Dtype dtype,
                                          std::optional<std::int64_t> samples) {
    const auto& model = project.project.model;
    torch::Tensor targets = load_tensor(file);
    const std::string targets_file = printable_name(file.string());
    if (targets.dim() == 0 || targets.size(0) == 0 || (samples && targets.size(0) != *samples)) {
        throw BackendError("--data: " + targets_file + " has shape " + shape_text(targets.sizes()) +
                           (samples ? " but inputs.pt holds " + std::to_string(*samples) +
                                          " samples: one target per sample"
                                    : ": it must hold one target per sample"));
    }
    const Shape& out = project.layers.back().output_shape;
    std::vector<std::int64_t> target_shape{targets.size(0)};
    if (model.loss == LossKind::cross_entropy) {
        target_shape.insert(target_shape.end(), out.begin(), out.end() - 1);
        const std::int64_t classes = out.back();
        if (targets.scalar_type() != torch::kInt64 || targets.sizes().vec() != target_shape) {
            throw BackendError("--data: " + targets_file + " must hold int64 class ids of shape " +
                               shape_text(target_shape) + " for cross_entropy (the output is " +
                               to_string(out) + "), got " +
                               std::string(c10::toString(targets.scalar_type())) + " " +
                               shape_text(targets.sizes()));
        }
        if (targets.min().item<std::int64_t>() < 0 ||
            targets.max().item<std::int64_t>() >= classes) {
            throw BackendError("--data: " + targets_file + " holds class ids outside 0 to " +
                               std::to_string(classes - 1) + " (the output has " +
                               std::to_string(classes) + " classes)");
        }
        return targets;
    }
    target_shape.insert(target_shape.end(), out.begin(), out.end());
    if (!targets.is_floating_point() || targets.sizes().vec() != target_shape) {
        throw BackendError("--data: " + targets_file + " must hold values of shape " +
                           shape_text(target_shape) + " for mse, got " +
                           std::string(c10::toString(targets.scalar_type())) + " " +
                           shape_text(targets.sizes()));
    }
    return targets.to(dtype);
}

Batch TensorData::batch(int step, int replica) const {
    const auto& p = *project_;
    const std::int64_t b = p.microbatch_size;
    const std::int64_t m = p.microbatches;
    const std::int64_t global = b * m * std::max(1, p.data_parallel());
    const std::int64_t n = samples();
    Batch out;
    for (std::int64_t k = 0; k < m; ++k) {
        const std::int64_t first = static_cast<std::int64_t>(step) * global + (replica * m + k) * b;
        const auto index = torch::remainder(torch::arange(first, first + b), n);
        // A part this rank did not load stays an undefined tensor: its
        // stages never read it.
        out.inputs.push_back(inputs_.defined() ? inputs_.index_select(0, index) : torch::Tensor());
        out.targets.push_back(targets_.defined() ? targets_.index_select(0, index)
                                                 : torch::Tensor());
    }
    return out;
}

}  // namespace pipewright::backend
