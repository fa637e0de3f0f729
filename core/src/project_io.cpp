#include "pipewright/core/project_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pipewright {

namespace {

// "line 3, column 14" for a byte offset into `text`.
std::string describe_offset(const std::string& text, std::size_t offset) {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string errno_text() {
    return std::strerror(errno);
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        throw std::runtime_error(path.string() + ": is a folder, not a file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error(path.string() + ": cannot open (" + errno_text() + ")");
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) {
        throw std::runtime_error(path.string() + ": read failed");
    }
    return buffer.str();
}

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
    const auto folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::string temp = (folder / ("." + path.filename().string() + ".XXXXXX")).string();
    int fd = ::mkstemp(temp.data());
    if (fd < 0) {
        throw std::runtime_error("cannot write " + path.string() + ": " + errno_text());
    }
    auto fail = [&](const std::string& what) {
        std::string reason = errno_text();
        ::close(fd);
        ::unlink(temp.c_str());
        throw std::runtime_error("cannot write " + path.string() + ": " + what + " (" + reason +
                                 "); the previous file is unchanged");
    };
    std::size_t written = 0;
    while (written < contents.size()) {
        ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            fail("write failed");
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) {
        fail("flush to disk failed");
    }
    // mkstemp creates 0600; a project file is an ordinary document.
    ::fchmod(fd, 0644);
    if (::close(fd) != 0) {
        ::unlink(temp.c_str());
        throw std::runtime_error("cannot write " + path.string() + ": " + errno_text());
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        std::string reason = errno_text();
        ::unlink(temp.c_str());
        throw std::runtime_error("cannot replace " + path.string() + ": " + reason);
    }
    // Make the rename itself durable; a failure here loses nothing already saved.
    int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

LoadedProject parse_project_text(const std::string& text) {
    LoadedProject out;
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is 1-based: the position of the character that broke parsing.
        const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        out.diagnostics.add("(document)",
                            "not valid JSON at " + describe_offset(text, offset) + ": " + e.what());
        return out;
    } catch (const nlohmann::json::exception& e) {
        // e.g. a number too large for a double (1e400)
        out.diagnostics.add("(document)", std::string("not usable JSON: ") + e.what());
        return out;
    }
    out.project = project_from_json(j, out.diagnostics);
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
