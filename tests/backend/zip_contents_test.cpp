// A zip (TorchScript files and torch.save files are zips) is sized from its
// central directory before anything is unpacked: a bomb is refused in words.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pipewright/backend/backend_error.h"
#include "zip_contents.h"

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

TEST(ZipContents, AFileThatIsNotAZipHasNoSize) {
    const fs::path text = fs::temp_directory_path() / "pipewright-not-a-zip.txt";
    std::ofstream(text) << "not a zip archive at all, just some text that is long enough";
    EXPECT_FALSE(backend::zip_unpacked_bytes(text).has_value());
    EXPECT_NO_THROW(backend::check_unpacked_size(text, "text", 1));
    fs::remove(text);
    EXPECT_FALSE(backend::zip_unpacked_bytes("/no/such/file").has_value());
}

}  // namespace
}  // namespace pipewright
