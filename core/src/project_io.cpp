#include "pipewright/core/project_io.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "pipewright/core/json_parse.h"
#include "pipewright/core/output_file.h"

namespace pipewright {

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
    OutputFile file(path);
    file.write(contents);
    file.commit();
}

LoadedProject parse_project_text(const std::string& text) {
    LoadedProject out;
    ParsedJson parsed = parse_json(text);
    // Duplicated keys are reported with the project's own problems.
    out.diagnostics = std::move(parsed.problems);
    if (parsed.value) {
        out.project = project_from_json(*parsed.value, out.diagnostics);
    }
    return out;
}

LoadedProject load_project_file(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_text_file(path);
    } catch (const std::exception& e) {
        LoadedProject out;
        out.diagnostics.add("(file)", e.what());
        return out;
    }
    return parse_project_text(text);
}

void save_project_file(const Project& project, const std::filesystem::path& path) {
    write_file_atomically(path, project_to_json(project).dump(2) + "\n");
}

}  // namespace pipewright
