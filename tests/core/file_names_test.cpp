#include "pipewright/core/file_names.h"

#include <gtest/gtest.h>

#include <string>

namespace pipewright {
namespace {

TEST(SafeFileStem, KeepsOrdinaryNames) {
    EXPECT_EQ(safe_file_stem("resnet50"), "resnet50");
    EXPECT_EQ(safe_file_stem("gpt-3_175B"), "gpt-3_175B");
}

TEST(SafeFileStem, NeverClimbsOutOfItsFolder) {
    EXPECT_EQ(safe_file_stem("../../../tmp/x"), "_________tmp_x");
    EXPECT_EQ(safe_file_stem(".."), "__");
    EXPECT_EQ(safe_file_stem("/etc/passwd"), "_etc_passwd");
}

TEST(SafeFileStem, ReplacesControlBytesAndNonAscii) {
    EXPECT_EQ(safe_file_stem(std::string("a\0b", 3)), "a_b");
    EXPECT_EQ(safe_file_stem("a\x1b[31mb\nc"), "a__31mb_c");
    EXPECT_EQ(safe_file_stem("mod\xc3\xa8le"), "mod__le");
}

TEST(SafeFileStem, IsBoundedAndNeverEmpty) {
    EXPECT_EQ(safe_file_stem(""), "run");
    EXPECT_EQ(safe_file_stem(std::string(1000, 'a')).size(), 64U);
}

}  // namespace
}  // namespace pipewright
