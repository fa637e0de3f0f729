#pragma once

// The one place where Pipewright turns JSON text (project, profile, timeline,
// device catalog) into a document. Input files are untrusted: nesting depth
// is bounded before anything deep is built (the document's copy, comparison
// and printing all recurse), and a key given twice in one object is reported
// instead of silently keeping the last one.

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pipewright/core/diagnostics.h"

namespace pipewright {

// Arrays and objects inside each other. Pipewright's own files need at most
// about 8; layer parameters a few more.
inline constexpr int kMaxJsonDepth = 64;

struct ParsedJson {
    // Unset when the text is not JSON or is nested deeper than kMaxJsonDepth.
    std::optional<nlohmann::json> value;
    // Why `value` is unset (path "(document)"), or every duplicated key, each
    // with its JSON path ("training.batch_size"), as unknown keys are reported.
    Diagnostics problems;
};

[[nodiscard]] ParsedJson parse_json(const std::string& text);

// `problems` with each path located in `file` ("runs/a.json: events[3].rank"),
// so that each message stands alone.
[[nodiscard]] Diagnostics located_in(const std::filesystem::path& file,
                                     const Diagnostics& problems);

// The document of a JSON file, as the loaders of timelines and profiles read
// it. Throws InputError: when the file cannot be read (missing, a folder, a
// device, too large: read_text_file's message, which names the file), or with
// every problem of its text located in it ("FILE: (document): not valid JSON
// at line 3, column 3 ...", "FILE: training.batch_size: appears twice ...").
[[nodiscard]] nlohmann::json parse_json_file(const std::filesystem::path& path);

}  // namespace pipewright
