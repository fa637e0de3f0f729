// A zip (TorchScript files and torch.save files are zips) is sized from its
// central directory before anything is unpacked: a bomb is refused in words.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <torch/torch.h>

#include "data/zip_contents.h"
#include "pipewright/backend/backend_error.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
const fs::path kFixtures = PIPEWRIGHT_TORCHSCRIPT_FIXTURES;

TEST(ZipContents, ATorchScriptFileUnpacksToAboutItsSize) {
    if (kFixtures.empty() || !fs::exists(kFixtures / "mlp.pt")) {
        GTEST_SKIP() << "no TorchScript fixtures (python3-torch missing)";
    }
    const auto unpacked = backend::zip_unpacked_bytes(kFixtures / "mlp.pt");
    ASSERT_TRUE(unpacked.has_value());
    EXPECT_GT(*unpacked, 0U);
    EXPECT_LE(*unpacked, fs::file_size(kFixtures / "mlp.pt"));  // stored, not compressed
}

TEST(ZipContents, ABombIsRefusedWithBothSizesBeforeItIsUnpacked) {
    if (kFixtures.empty() || !fs::exists(kFixtures / "bomb.pt")) {
        GTEST_SKIP() << "no TorchScript fixtures (python3-torch missing)";
    }
    const fs::path bomb = kFixtures / "bomb.pt";
    const auto unpacked = backend::zip_unpacked_bytes(bomb);
    ASSERT_TRUE(unpacked.has_value());
    EXPECT_GE(*unpacked, 64U << 20);
    EXPECT_LT(fs::file_size(bomb), 1U << 20);
    try {
        backend::check_unpacked_size(bomb, "the TorchScript file bomb.pt", 32.0 * (1 << 20));
        ADD_FAILURE() << "a bomb past the bound was accepted";
    } catch (const backend::BackendError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("the TorchScript file bomb.pt unpacks to 64.0 MiB from"),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("more than the 32.0 MiB this machine has available"), std::string::npos)
            << what;
    }
    // Within the bound it passes.
    EXPECT_NO_THROW(backend::check_unpacked_size(bomb, "bomb.pt", 1e9));
}

// Where each entry's bytes lie: torch.save (here torch::pickle_save, the
// same writer) stores records uncompressed, aligned to 64 bytes, which is
// what lets --data map them.
TEST(ZipContents, EntriesSayWhereTheirBytesLieAndHowTheyAreStored) {
    const fs::path file = fs::temp_directory_path() / "pipewright-zip-entries.pt";
    const torch::Tensor t = torch::arange(1000, torch::kFloat64);
    const std::vector<char> bytes = torch::pickle_save(t);
    std::ofstream(file, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const auto entries = backend::zip_entries(file);
    ASSERT_TRUE(entries.has_value());
    bool storage = false;
    for (const auto& e : *entries) {
        EXPECT_EQ(e.method, 0) << e.name;
        EXPECT_EQ(e.packed_bytes, e.unpacked_bytes) << e.name;
        if (e.name == "archive/data/0") {
            storage = true;
            EXPECT_EQ(e.data_offset % 64, 0U);
            EXPECT_EQ(e.packed_bytes, 8000U);
            EXPECT_EQ(std::memcmp(bytes.data() + e.data_offset, t.data_ptr(), 8000), 0);
        }
    }
    EXPECT_TRUE(storage);
    fs::remove(file);
    if (!kFixtures.empty() && fs::exists(kFixtures / "bomb.pt")) {
        const auto bomb = backend::zip_entries(kFixtures / "bomb.pt");
        ASSERT_TRUE(bomb.has_value());
        ASSERT_EQ(bomb->size(), 2U);
        EXPECT_EQ(bomb->at(1).name, "bomb/data/0");
        EXPECT_EQ(bomb->at(1).method, 8);  // deflated
        EXPECT_EQ(bomb->at(1).unpacked_bytes, 64U << 20);
        EXPECT_LT(bomb->at(1).packed_bytes, 1U << 20);
    }
}

TEST(ZipContents, AFileThatIsNotAZipHasNoSize) {
    const fs::path text = fs::temp_directory_path() / "pipewright-not-a-zip.txt";
    std::ofstream(text) << "not a zip archive at all, just some text that is long enough";
    EXPECT_FALSE(backend::zip_unpacked_bytes(text).has_value());
    EXPECT_NO_THROW(backend::check_unpacked_size(text, "text", 1));
    fs::remove(text);
    EXPECT_FALSE(backend::zip_unpacked_bytes("/no/such/file").has_value());
    EXPECT_FALSE(backend::zip_entries("/no/such/file").has_value());
}

}  // namespace
}  // namespace pipewright
