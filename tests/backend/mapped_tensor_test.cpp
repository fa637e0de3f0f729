// `run --data`: a torch.save file is mapped, not read. The tensor's storage
// points into a read-only mapping of the file (pages shared with the other
// ranks through the page cache), holds what torch.load would give for every
// dtype and view, and is converted to the run's dtype one batch at a time.
// Archives laid out otherwise than torch.save does are read as before.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <torch/torch.h>

#include "backend_test_util.h"
#include "cli_runner.h"
#include "pipewright/backend/backend_error.h"
#include "pipewright/backend/tensor_data.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;

// The file whose mapping holds address `p` in this process ("[heap]" or ""
// for memory of its own: the tensor was copied).
std::string mapped_file_at(const void* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream fields(line);
        std::string range, perms, offset, device, inode, path;
        fields >> range >> perms >> offset >> device >> inode;
        std::getline(fields >> std::ws, path);
        const auto dash = range.find('-');
        const auto begin = std::stoull(range.substr(0, dash), nullptr, 16);
        const auto end = std::stoull(range.substr(dash + 1), nullptr, 16);
        if (address >= begin && address < end) {
            return path;
        }
    }
    return "";
}

bool mapped_from(const torch::Tensor& t, const fs::path& file) {
    return mapped_file_at(t.data_ptr()) == fs::canonical(file).string();
}

// What LibTorch's own loader makes of the file (the whole file read into
// memory, as --data did before).
torch::Tensor reference(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    return torch::pickle_load(bytes).toTensor();
}

std::string refusal(const fs::path& file) {
    try {
        (void)backend::load_saved_tensor(file);
    } catch (const backend::BackendError& e) {
        return e.what();
    }
    return "";
}

// This process's private (anonymous) resident memory, RssAnon.
std::int64_t anonymous_resident_bytes() {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        if (key == "RssAnon:") {
            std::int64_t kib = 0;
            status >> kib;
            return kib * 1024;
        }
        status.ignore(1 << 16, '\n');
    }
    return -1;
}

// Files written by Debian's python3-torch (tests/backend/saved_tensors.py).
class SavedTensors : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (std::string(PIPEWRIGHT_REFERENCE_PYTHON).empty()) {
            return;
        }
        folder_ = new fs::path(test::temp_dir("saved-tensors"));
        const std::string command = std::string(PIPEWRIGHT_REFERENCE_PYTHON) + " " +
                                    PIPEWRIGHT_SAVED_TENSORS_SCRIPT + " " + folder_->string();
        ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
    static void TearDownTestSuite() {
        if (folder_ != nullptr) {
            fs::remove_all(*folder_);
            delete folder_;
            folder_ = nullptr;
        }
    }
    void SetUp() override {
        if (folder_ == nullptr) {
            GTEST_SKIP() << "python3-torch missing (scripts/setup-debian.sh installs it)";
        }
    }
    static fs::path file(const std::string& name) { return *folder_ / name; }

    static fs::path* folder_;
};

fs::path* SavedTensors::folder_ = nullptr;

TEST_F(SavedTensors, EachDtypeAndViewIsMappedAndHoldsWhatTorchLoadGives) {
    for (const std::string name :
         {"float32.pt", "float64.pt", "int64.pt", "transposed.pt", "slice.pt", "columns.pt"}) {
        SCOPED_TRACE(name);
        const torch::Tensor mapped = backend::load_saved_tensor(file(name));
        const torch::Tensor expected = reference(file(name));
        EXPECT_EQ(mapped.scalar_type(), expected.scalar_type());
        EXPECT_EQ(mapped.sizes(), expected.sizes());
        EXPECT_EQ(mapped.strides(), expected.strides());
        EXPECT_EQ(mapped.storage_offset(), expected.storage_offset());
        EXPECT_TRUE(torch::equal(mapped, expected));
        EXPECT_TRUE(mapped_from(mapped, file(name))) << mapped_file_at(mapped.data_ptr());
    }
    // The views: one not contiguous, one starting inside its storage.
    EXPECT_FALSE(backend::load_saved_tensor(file("transposed.pt")).is_contiguous());
    EXPECT_EQ(backend::load_saved_tensor(file("slice.pt")).storage_offset(), 12);
}

TEST_F(SavedTensors, TheMappingLivesAsLongAsTheTensor) {
    torch::Tensor row;
    {
        const torch::Tensor whole = backend::load_saved_tensor(file("columns.pt"));
        row = whole[2];
    }
    EXPECT_TRUE(mapped_from(row, file("columns.pt")));
    EXPECT_TRUE(torch::equal(row, reference(file("columns.pt"))[2]));
}

// Layouts torch.save does not write are read into memory, as before.
TEST_F(SavedTensors, ACompressedOrMisalignedRecordIsReadInstead) {
    for (const auto& [name, like] :
         {std::pair{"deflated.pt", "float32.pt"}, std::pair{"misaligned.pt", "float64.pt"}}) {
        SCOPED_TRACE(name);
        const torch::Tensor read = backend::load_saved_tensor(file(name));
        EXPECT_TRUE(torch::equal(read, reference(file(like))));
        EXPECT_FALSE(mapped_from(read, file(name)));
    }
}

TEST_F(SavedTensors, OtherFilesAreRefusedWithTheWordsTheyHadBefore) {
    const std::string dict = refusal(file("dict.pt"));
    EXPECT_NE(dict.find("dict.pt holds a GenericDict, not one tensor; save it with "
                        "torch.save(tensor, path)"),
              std::string::npos)
        << dict;
    const fs::path text = file("text.pt");
    std::ofstream(text) << "not a zip archive, just text long enough to look for a directory";
    const std::string not_torch = refusal(text);
    EXPECT_NE(not_torch.find("text.pt is not a tensor saved with torch.save ("), std::string::npos)
        << not_torch;
    const std::string big = refusal(file("big-endian.pt"));
    EXPECT_NE(big.find("big-endian.pt was saved on a big-endian machine; only little-endian"),
              std::string::npos)
        << big;
    // A 0-dim tensor loads (mapped) and is refused by the shape check.
    EXPECT_EQ(backend::load_saved_tensor(file("zero-dim.pt")).dim(), 0);
    const AnalyzedProject mlp = test::analyze_text(test::mlp_project_json(test::MlpSpec{}));
    const fs::path dir = file("zero-dim-data");
    fs::create_directories(dir);
    fs::copy_file(file("zero-dim.pt"), dir / "inputs.pt", fs::copy_options::overwrite_existing);
    std::string why;
    try {
        (void)backend::TensorData(dir, mlp, torch::kFloat32);
    } catch (const backend::BackendError& e) {
        why = e.what();
    }
    EXPECT_NE(why.find("inputs.pt has shape []; it must be [N, 16] with N ≥ 1 samples"),
              std::string::npos)
        << why;
}

// A float32 file in a float64 run: the batch is what converting the whole
// tensor gave, and only the batch is converted.
TEST_F(SavedTensors, AFloat32FileInAFloat64RunIsConvertedABatchAtATime) {
    const AnalyzedProject mlp = test::analyze_text(test::mlp_project_json(test::MlpSpec{}));
    const fs::path dir = file("mlp-data");
    const backend::TensorData data(dir, mlp, torch::kFloat64);
    ASSERT_EQ(data.samples(), 20);
    const torch::Tensor inputs = reference(dir / "inputs.pt").contiguous().to(torch::kFloat64);
    const torch::Tensor targets = reference(dir / "targets.pt").to(torch::kFloat64);
    const std::int64_t rows = mlp.microbatch_size * mlp.microbatches;
    for (int step : {0, 1, 2}) {
        SCOPED_TRACE(step);
        const auto batch = data.batch(step);
        const auto index = torch::remainder(torch::arange(step * rows, (step + 1) * rows), 20);
        const torch::Tensor got = torch::cat(batch.inputs);
        EXPECT_EQ(got.scalar_type(), torch::kFloat64);
        EXPECT_TRUE(got.is_contiguous());
        EXPECT_TRUE(torch::equal(got, inputs.index_select(0, index)));
        EXPECT_TRUE(torch::equal(torch::cat(batch.targets), targets.index_select(0, index)));
    }
    // And the other way: the float64 targets in a float32 run.
    const backend::TensorData narrow(dir, mlp, torch::kFloat32);
    const torch::Tensor got = torch::cat(narrow.batch(0).targets);
    EXPECT_EQ(got.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::equal(
        got, reference(dir / "targets.pt").to(torch::kFloat32).narrow(0, 0, got.size(0))));
}

// The storage is the file's pages, not a private copy: loading a 200 MB
// float32 file into a float64 run grows this process's anonymous memory by
// far less than the file (the old read held the bytes, the float32 tensor
// and its float64 copy: about 4 times the file).
TEST(MappedTensorData, ALargeFileCostsThisProcessOnlyItsBatches) {
    const AnalyzedProject mlp = test::analyze_text(test::mlp_project_json(test::MlpSpec{}));
    const fs::path dir = test::temp_dir("mapped-tensor-data");
    const std::int64_t samples = 3200000;  // x 16 floats: 205 MB
    {
        const std::vector<char> bytes = torch::pickle_save(torch::rand({samples, 16}));
        std::ofstream(dir / "inputs.pt", std::ios::binary)
            .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const std::int64_t file_bytes = static_cast<std::int64_t>(fs::file_size(dir / "inputs.pt"));
    ASSERT_GT(file_bytes, 200'000'000);
    const std::int64_t before = anonymous_resident_bytes();
    ASSERT_GT(before, 0);
    {
        const backend::TensorData data(dir, mlp, torch::kFloat64,
                                       backend::TensorData::Parts::inputs);
        EXPECT_EQ(data.samples(), samples);
        const auto batch = data.batch(7);
        EXPECT_EQ(batch.inputs.front().scalar_type(), torch::kFloat64);
        const std::int64_t grown = anonymous_resident_bytes() - before;
        EXPECT_LT(grown, file_bytes / 8) << "anonymous memory grew by " << grown << " bytes";
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace pipewright
