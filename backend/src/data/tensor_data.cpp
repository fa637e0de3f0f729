#include "pipewright/backend/tensor_data.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>

#include "data/mapped_file.h"
#include "data/zip_contents.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/modules.h"
#include "pipewright/core/context_parallel.h"
#include "pipewright/core/machine_memory.h"
#include "pipewright/core/printable_name.h"
#include "pipewright/core/quantity_format.h"

namespace pipewright::backend {
namespace {

std::string shape_text(c10::IntArrayRef sizes) {
    return to_string(Shape(sizes.begin(), sizes.end()));
}

// Thrown inside the mapped read when the archive is laid out in a way it
// does not handle; the streamed read takes over (and says what is wrong,
// if anything is).
struct NotMappable {};

// The storage's DataPtr context: the mapping lives as long as any tensor
// (or view of one) points into it.
void release_mapping(void* context) {
    delete static_cast<std::shared_ptr<const MappedFile>*>(context);
}

// Whether every element `t` can address lies inside its storage (the
// pickle names sizes and strides; a damaged one must not read past the
// record, or past the end of the mapping).
bool within_storage(const torch::Tensor& t) {
    if (t.numel() == 0) {
        return true;
    }
    std::int64_t last = t.storage_offset();
    for (std::int64_t d = 0; d < t.dim(); ++d) {
        if (t.stride(d) < 0) {
            return false;
        }
        last += (t.size(d) - 1) * t.stride(d);
    }
    return t.storage_offset() >= 0 && (last + 1) * static_cast<std::int64_t>(t.element_size()) <=
                                          static_cast<std::int64_t>(t.storage().nbytes());
}

// The value torch.save wrote to `file`, its tensors' storages pointing into
// a read-only mapping of the file: nothing is copied, and the pages are
// shared with every other rank reading the same file. torch.save stores
// the archive's entries uncompressed, each storage aligned to 64 bytes
// (caffe2::serialize::kFieldAlignment); anything else (a compressed entry, a
// record misaligned for its dtype, no archive at all) throws NotMappable
// and is read into memory instead. The records are taken to be little-endian, as
// this machine is: a file saved big-endian is refused.
torch::IValue load_mapped(const std::filesystem::path& file) {
    const auto entries = zip_entries(file);
    if (!entries || entries->empty()) {
        throw NotMappable{};
    }
    // Every record lies under one folder, named after the file when
    // torch.save wrote it ("archive/" from torch::pickle_save).
    const std::string& first = entries->front().name;
    const auto slash = first.find('/');
    if (slash == std::string::npos) {
        throw NotMappable{};
    }
    const std::string prefix = first.substr(0, slash + 1);
    std::map<std::string, const ZipEntry*> records;
    for (const auto& e : *entries) {
        if (e.name.compare(0, prefix.size(), prefix) == 0) {
            records.emplace(e.name.substr(prefix.size()), &e);
        }
    }
    const auto record = [&records](const std::string& name) -> const ZipEntry* {
        const auto it = records.find(name);
        return it == records.end() ? nullptr : it->second;
    };
    const ZipEntry* pickle = record("data.pkl");
    if (pickle == nullptr || pickle->method != 0) {
        throw NotMappable{};
    }
    std::shared_ptr<const MappedFile> mapping;
    try {
        mapping = MappedFile::open(file);
    } catch (const BackendError&) {
        throw NotMappable{};  // e.g. a file system that cannot map: read it instead
    }
    for (const auto& e : *entries) {
        if (e.data_offset + e.packed_bytes > mapping->size()) {
            throw NotMappable{};  // the file changed since its directory was read
        }
    }
    const auto text = [&mapping](const ZipEntry& e) {
        return std::string(reinterpret_cast<const char*>(mapping->data()) + e.data_offset,
                           e.packed_bytes);
    };
    // The format's version, as PyTorchStreamReader reads it; outside what
    // this LibTorch reads, the streamed read says so.
    const ZipEntry* version_record = record("version");
    if (version_record == nullptr) {
        version_record = record(".data/version");
    }
    std::uint64_t version = caffe2::serialize::kProducedFileFormatVersion;
    if (version_record != nullptr) {
        if (version_record->method != 0) {
            throw NotMappable{};
        }
        try {
            version = std::stoull(text(*version_record));
        } catch (const std::exception&) {
            throw NotMappable{};
        }
    }
    if (version < caffe2::serialize::kMinSupportedFileFormatVersion ||
        version > caffe2::serialize::kMaxSupportedFileFormatVersion) {
        throw NotMappable{};
    }
    // Newer torch.save writes the byte order it saved in; older ones
    // (this LibTorch's included) only ever saved little-endian.
    const ZipEntry* order = record("byteorder");
    if (order != nullptr && order->method != 0) {
        throw NotMappable{};
    }
    if (order != nullptr && text(*order).rfind("little", 0) != 0) {
        throw BackendError("--data: " + printable_name(file.string()) +
                           " was saved on a big-endian machine; only little-endian files are "
                           "read (torch.load it where PyTorch swaps its bytes, 2.1 or later, "
                           "and torch.save it again)");
    }

    std::size_t read = 0;
    const char* pickle_bytes = reinterpret_cast<const char*>(mapping->data()) + pickle->data_offset;
    const auto reader = [&](char* buffer, std::size_t length) -> std::size_t {
        length = std::min<std::size_t>(length, pickle->packed_bytes - read);
        std::memcpy(buffer, pickle_bytes + read, length);
        read += length;
        return length;
    };
    // Each storage's record: its bytes, where they start in the mapping.
    std::map<const void*, std::uint64_t> record_bytes;
    const auto read_record = [&](const std::string& key) -> at::DataPtr {
        const ZipEntry* e = record("data/" + key);
        if (e == nullptr || e->method != 0) {
            throw NotMappable{};  // missing (the streamed read says so) or compressed
        }
        void* start = const_cast<unsigned char*>(mapping->data() + e->data_offset);
        record_bytes[start] = e->packed_bytes;
        return {start, new std::shared_ptr<const MappedFile>(mapping), &release_mapping,
                at::Device(at::kCPU)};
    };
    torch::jit::Unpickler unpickler(reader, nullptr, nullptr, read_record, c10::nullopt);
    unpickler.set_version(version);
    torch::IValue value = unpickler.parse_ivalue();
    if (value.isTensor()) {
        const torch::Tensor& t = value.toTensor();
        const void* base = t.storage().data();
        const auto bytes = record_bytes.find(base);
        if (bytes != record_bytes.end() &&
            (t.storage().nbytes() > bytes->second || !within_storage(t))) {
            throw BackendError("--data: " + printable_name(file.string()) +
                               " is damaged: its tensor needs more bytes than its storage "
                               "record holds");
        }
        if (reinterpret_cast<std::uintptr_t>(base) % t.element_size() != 0) {
            throw NotMappable{};  // misaligned for its dtype: copied by the streamed read
        }
    }
    return value;
}

// Rows of the file's tensor as a batch: token and class ids stay int64 (the
// checks refuse int64 anywhere else); values take the run's dtype (integer
// inputs of a float model through float32, as they always did). Only the
// selected rows are converted: the file's tensor stays mapped.
torch::Tensor in_run_dtype(torch::Tensor rows, torch::Dtype dtype) {
    if (rows.scalar_type() == torch::kInt64) {
        return rows;
    }
    if (!rows.is_floating_point()) {
        rows = rows.to(torch::kFloat32);
    }
    return rows.to(dtype);
}

// What cannot be mapped is read as torch::pickle_load reads bytes in
// memory, but from the file: PyTorchStreamReader, record by record
// (inflating compressed ones). The tensor's storage is this process's own.
torch::IValue load_streamed(const std::filesystem::path& file) {
    caffe2::serialize::PyTorchStreamReader reader(file.string());
    return torch::jit::readArchiveAndTensors("data", "", "", c10::nullopt, c10::nullopt,
                                             c10::nullopt, reader);
}

}  // namespace

torch::Tensor load_saved_tensor(const std::filesystem::path& file) {
    if (!std::ifstream(file, std::ios::binary)) {
        throw BackendError("--data: cannot read " + file.string() +
                           " (the folder needs inputs.pt and targets.pt, each written with "
                           "torch.save(tensor, path))");
    }
    const auto out_of_memory = [&file] {
        return BackendError("--data: out of memory reading " + printable_name(file.string()) +
                            " (this machine has " +
                            format_bytes(static_cast<double>(available_memory_bytes())) +
                            " available)");
    };
    torch::IValue value;
    try {
        try {
            value = load_mapped(file);
        } catch (const NotMappable&) {
            // Read into this process's memory: the unpacked size must fit.
            check_unpacked_size(file, "--data: " + printable_name(file.string()),
                                static_cast<double>(available_memory_bytes()));
            value = load_streamed(file);
        }
    } catch (const BackendError&) {
        throw;
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
    return value.toTensor();
}

TensorData::TensorData(const std::filesystem::path& folder, const AnalyzedProject& project,
                       torch::Dtype dtype, Parts parts)
    : project_(&project), dtype_(dtype) {
    // A rank loads only what its stages read (the first stage the inputs,
    // the last the targets): a large folder is not held by every worker.
    // The launcher loads both, one after the other, to check them together.
    std::optional<std::int64_t> samples;
    if (parts != Parts::targets) {
        inputs_ = checked_inputs(folder / "inputs.pt", project);
        samples = inputs_.size(0);
    }
    if (parts != Parts::inputs) {
        targets_ = checked_targets(folder / "targets.pt", project, samples);
    }
}

std::int64_t TensorData::samples() const {
    return inputs_.defined() ? inputs_.size(0) : targets_.size(0);
}

torch::Tensor TensorData::checked_inputs(const std::filesystem::path& file,
                                         const AnalyzedProject& project) {
    const auto& model = project.project.model;
    torch::Tensor inputs = load_saved_tensor(file);
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
    // Converted to the run's dtype a batch at a time (TensorData::batch):
    // converting here would copy the whole file into this process.
    return inputs;
}

torch::Tensor TensorData::checked_targets(const std::filesystem::path& file,
                                          const AnalyzedProject& project,
                                          std::optional<std::int64_t> samples) {
    const auto& model = project.project.model;
    torch::Tensor targets = load_saved_tensor(file);
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
    return targets;  // converted a batch at a time, as the inputs
}

Batch TensorData::batch(int step, int replica) const {
    const auto& p = *project_;
    const std::int64_t b = p.microbatch_size;
    const std::int64_t m = p.microbatches;
    // The replicas of a context group share their samples.
    const std::int64_t global =
        b * m * batch_shares(p.data_parallel(), p.project.context_parallel.size);
    const std::int64_t n = samples();
    Batch out;
    for (std::int64_t k = 0; k < m; ++k) {
        const std::int64_t first = static_cast<std::int64_t>(step) * global + (replica * m + k) * b;
        const auto index = torch::remainder(torch::arange(first, first + b), n);
        // A part this rank did not load stays an undefined tensor: its
        // stages never read it.
        out.inputs.push_back(inputs_.defined()
                                 ? in_run_dtype(inputs_.index_select(0, index), dtype_)
                                 : torch::Tensor());
        out.targets.push_back(targets_.defined()
                                  ? in_run_dtype(targets_.index_select(0, index), dtype_)
                                  : torch::Tensor());
    }
    return out;
}

}  // namespace pipewright::backend
