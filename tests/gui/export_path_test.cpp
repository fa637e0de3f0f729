#include <gtest/gtest.h>

#include "studio_core/format/export_path.h"

namespace pipewright::gui {
namespace {

TEST(ExportPath, TheRightExtensionIsKept) {
    EXPECT_EQ(resolve_export_path("/tmp/x.svg", ExportFormat::svg).path, "/tmp/x.svg");
    EXPECT_EQ(resolve_export_path("/tmp/X.PNG", ExportFormat::png).path, "/tmp/X.PNG");
    EXPECT_EQ(resolve_export_path("/tmp/t.json", ExportFormat::chrome_trace).path, "/tmp/t.json");
}

TEST(ExportPath, AMissingExtensionIsAdded) {
    EXPECT_EQ(resolve_export_path("/tmp/timeline", ExportFormat::svg).path, "/tmp/timeline.svg");
    EXPECT_EQ(resolve_export_path("/tmp/charts", ExportFormat::pdf).path, "/tmp/charts.pdf");
    // Dots that are part of the name are not an extension.
    EXPECT_EQ(resolve_export_path("/tmp/run.2024-05", ExportFormat::png).path,
              "/tmp/run.2024-05.png");
    EXPECT_EQ(resolve_export_path("/tmp/gpt3.v2", ExportFormat::svg).path, "/tmp/gpt3.v2.svg");
    EXPECT_EQ(resolve_export_path("/tmp/.png", ExportFormat::svg).path, "/tmp/.png.svg");
    EXPECT_EQ(resolve_export_path("/tmp/plan", ExportFormat::csv).path, "/tmp/plan.csv");
}

TEST(ExportPath, AnotherFormatsExtensionIsRefusedWithTheRightName) {
    const ExportPath wrong = resolve_export_path("/tmp/x.png", ExportFormat::svg);
    EXPECT_TRUE(wrong.path.isEmpty());
    EXPECT_EQ(wrong.suggestion, "/tmp/x.svg");
    EXPECT_EQ(wrong.refusal,
              "“x.png” names a PNG image, but this export writes an SVG image: save it as "
              "“x.svg”.");
    const ExportPath jpeg = resolve_export_path("/tmp/a.b.JPG", ExportFormat::png);
    EXPECT_TRUE(jpeg.path.isEmpty());
    EXPECT_EQ(jpeg.suggestion, "/tmp/a.b.png");
    EXPECT_EQ(resolve_export_path("/tmp/t.pdf", ExportFormat::chrome_trace).suggestion,
              "/tmp/t.json");
}

TEST(ExportPath, NoNameIsRefused) {
    EXPECT_TRUE(resolve_export_path("/tmp/", ExportFormat::png).path.isEmpty());
    EXPECT_FALSE(resolve_export_path("/tmp/", ExportFormat::png).refusal.isEmpty());
}

TEST(ExportPath, FiltersNameTheFormat) {
    EXPECT_EQ(export_filter(ExportFormat::svg), "SVG image (*.svg)");
    EXPECT_EQ(export_filter(ExportFormat::chrome_trace), "Chrome trace (*.json)");
}

}  // namespace
}  // namespace pipewright::gui
