#include "pipewright/backend/tensor_data.h"

#include <fstream>
#include <iterator>

#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
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
                        available_memory_bytes() / 2);
    torch::IValue value;
    try {
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                      std::istreambuf_iterator<char>());
        value = torch::pickle_load(bytes);
    } catch (const std::bad_alloc&) {
        throw BackendError("--data: out of memory reading " + printable_name(file.string()) +
                           " (this machine has " + format_bytes(available_memory_bytes()) +
                           " available)");
    } catch (const std::exception& e) {
        std::string why = e.what();
        if (why.find("can't allocate memory") != std::string::npos ||
            why.find("not enough memory") != std::string::npos) {
            throw BackendError("--data: out of memory reading " + printable_name(file.string()) +
                               " (this machine has " + format_bytes(available_memory_bytes()) +
                               " available)");
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
                       torch::Dtype dtype)
    : project_(&project) {
    const auto& model = project.project.model;
    inputs_ = load_tensor(folder / "inputs.pt");
    targets_ = load_tensor(folder / "targets.pt");
    const auto inputs_file = (folder / "inputs.pt").string();
    const auto targets_file = (folder / "targets.pt").string();
    std::vector<std::int64_t> want{inputs_.dim() > 0 ? inputs_.size(0) : 0};
    want.insert(want.end(), model.input.shape.begin(), model.input.shape.end());
    if (inputs_.dim() == 0 || inputs_.size(0) == 0 || inputs_.sizes().vec() != want) {
        throw BackendError("--data: " + inputs_file + " has shape " + shape_text(inputs_.sizes()) +
                           "; it must be [N, " + to_string(model.input.shape).substr(1) +
                           " with N ≥ 1 samples");
    }
    const bool tokens = model.input.dtype == DType::int64;
    if (tokens != (inputs_.scalar_type() == torch::kInt64)) {
        throw BackendError("--data: " + inputs_file + " holds " +
                           std::string(c10::toString(inputs_.scalar_type())) +
                           "; the model takes " +
                           (tokens ? "int64 token ids" : "floating-point values"));
    }
    if (tokens) {
        // An id past the embedding's table trains in silence under tensor
        // parallelism (each slice masks the ids it does not hold) and fails
        // deep inside a worker without it: refused here, before any starts.
        const std::int64_t vocabulary = input_vocabulary(model);
        const std::int64_t low = inputs_.min().item<std::int64_t>();
        const std::int64_t high = inputs_.max().item<std::int64_t>();
        if (vocabulary > 0 && (low < 0 || high >= vocabulary)) {
            throw BackendError("--data: " + inputs_file + " holds token ids from " +
                               std::to_string(low) + " to " + std::to_string(high) +
                               ", outside 0 to " + std::to_string(vocabulary - 1) +
                               " (the model's vocabulary of " + std::to_string(vocabulary) + ")");
        }
    } else {
        if (inputs_.is_complex() || inputs_.scalar_type() == torch::kBool) {
            throw BackendError("--data: " + inputs_file + " holds " +
                               std::string(c10::toString(inputs_.scalar_type())) +
                               " values; the model takes real numbers (float32 or float64)");
        }
        if (!inputs_.is_floating_point()) {
            inputs_ = inputs_.to(torch::kFloat32);
        }
        inputs_ = inputs_.to(dtype);
    }
    if (targets_.dim() == 0 || targets_.size(0) != inputs_.size(0)) {
        throw BackendError("--data: " + targets_file + " has shape " +
                           shape_text(targets_.sizes()) + " but inputs.pt holds " +
                           std::to_string(inputs_.size(0)) + " samples: one target per sample");
    }
    const Shape& out = project.layers.back().output_shape;
    std::vector<std::int64_t> target_shape{inputs_.size(0)};
    if (model.loss == LossKind::cross_entropy) {
        target_shape.insert(target_shape.end(), out.begin(), out.end() - 1);
        const std::int64_t classes = out.back();
        if (targets_.scalar_type() != torch::kInt64 || targets_.sizes().vec() != target_shape) {
            throw BackendError("--data: " + targets_file + " must hold int64 class ids of shape " +
                               shape_text(target_shape) + " for cross_entropy (the output is " +
                               to_string(out) + "), got " +
                               std::string(c10::toString(targets_.scalar_type())) + " " +
                               shape_text(targets_.sizes()));
        }
        if (targets_.min().item<std::int64_t>() < 0 ||
            targets_.max().item<std::int64_t>() >= classes) {
            throw BackendError("--data: " + targets_file + " holds class ids outside 0 to " +
                               std::to_string(classes - 1) + " (the output has " +
                               std::to_string(classes) + " classes)");
        }
    } else {
        target_shape.insert(target_shape.end(), out.begin(), out.end());
        if (!targets_.is_floating_point() || targets_.sizes().vec() != target_shape) {
            throw BackendError("--data: " + targets_file + " must hold values of shape " +
                               shape_text(target_shape) + " for mse, got " +
                               std::string(c10::toString(targets_.scalar_type())) + " " +
                               shape_text(targets_.sizes()));
        }
        targets_ = targets_.to(dtype);
    }
}

Batch TensorData::batch(int step, int replica) const {
    const auto& p = *project_;
    const std::int64_t b = p.microbatch_size;
    const std::int64_t m = p.microbatches;
    const std::int64_t global = b * m * std::max(1, p.data_parallel());
    const std::int64_t n = inputs_.size(0);
    Batch out;
    for (std::int64_t k = 0; k < m; ++k) {
        const std::int64_t first = static_cast<std::int64_t>(step) * global + (replica * m + k) * b;
        const auto index = torch::remainder(torch::arange(first, first + b), n);
        out.inputs.push_back(inputs_.index_select(0, index));
        out.targets.push_back(targets_.index_select(0, index));
    }
    return out;
}

}  // namespace pipewright::backend
