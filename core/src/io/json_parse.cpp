#include "pipewright/core/json_parse.h"

#include <exception>

#include <utility>
#include <vector>

#include "pipewright/core/input_file.h"

namespace pipewright {

namespace {

using nlohmann::json;

struct TooDeep {};

// One open array or object while parsing: enough to name the path of a
// duplicated key. The element being read is always the container's last.
struct Frame {
    json* value = nullptr;  // inside the document being built
    std::string key;        // objects: the member being read
};

// Builds the document from SAX events. nlohmann's own parser callback would
// do, but its DOM builder scans the enclosing container at every object's end
// (quadratic: a 13 MB timeline took 15 s instead of 0.4 s), so the document
// is built here, the way nlohmann's plain parser builds it.
class Builder {
  public:
    Builder(json& root, Diagnostics& problems) : root_(root), problems_(problems) {}

    bool null() { return add(json(nullptr)); }
    bool boolean(bool v) { return add(json(v)); }
    bool number_integer(json::number_integer_t v) { return add(json(v)); }
    bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
    bool number_float(json::number_float_t v, const json::string_t& /*text*/) {
        return add(json(v));
    }
    bool string(json::string_t& v) { return add(json(std::move(v))); }
    bool binary(json::binary_t& v) { return add(json(std::move(v))); }

    bool start_object(std::size_t /*size*/) { return open(json::object()); }
    bool start_array(std::size_t /*size*/) { return open(json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(json::string_t& k) {
        Frame& f = frames_.back();
        f.key = k;
        // The earlier member of that name is already in the object.
        if (f.value->contains(k)) {
            problems_.add(path(),
                          "appears twice in the same object (each key may appear only once; "
                          "otherwise the last one would silently win)");
        }
        return true;
    }

    // Called with nlohmann's concrete exception type; thrown as the plain
    // parser would, so callers see the usual parse_error and out_of_range.
    template <typename Exception>
    bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Exception& e) {
        throw e;
    }

  private:
    // The slot of the next value: the root, the next array element, or the
    // member under the last key (a duplicate replaces the earlier value, as
    // nlohmann does; it is reported either way).
    json* slot(json&& v) {
        if (frames_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        Frame& f = frames_.back();
        if (f.value->is_array()) {
            f.value->push_back(std::move(v));
            return &f.value->back();
        }
        json& member = (*f.value)[f.key];
        member = std::move(v);
        return &member;
    }

    bool add(json&& v) {
        slot(std::move(v));
        return true;
    }

    // The parser itself is iterative; refusing at the opening bracket keeps
    // everything built afterwards (copies, dumps, destruction) shallow.
    bool open(json&& container) {
        if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
            throw TooDeep{};
        }
        json* at = slot(std::move(container));
        frames_.push_back(Frame{at, {}});
        return true;
    }

    bool close() {
        frames_.pop_back();
        return true;
    }

    [[nodiscard]] std::string path() const {
        std::string out;
        for (std::size_t i = 0; i < frames_.size(); ++i) {
            const Frame& f = frames_[i];
            if (f.value->is_object()) {
                out += (out.empty() ? "" : ".") + f.key;
            } else {
                out += "[" + std::to_string(f.value->size() - 1) + "]";
            }
        }
        return out;
    }

    json& root_;
    Diagnostics& problems_;
    std::vector<Frame> frames_;
};

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

// The parser's own words without its decorations: "[json.exception.parse_error.101]
// parse error at line 5, column 16: syntax error while parsing value - unexpected
// '}'; expected '[', '{', or a literal" becomes "unexpected '}'; expected '[',
// '{', or a literal". The position is said once, before it, and the text the
// parser last read (with control characters written as <U+000A>) only repeats it.
std::string plain_parse_message(std::string what) {
    if (what.starts_with("[json.exception.")) {
        const auto end = what.find("] ");
        what.erase(0, end == std::string::npos ? 0 : end + 2);
    }
    if (what.starts_with("parse error")) {
        const auto colon = what.find(": ");
        what.erase(0, colon == std::string::npos ? 0 : colon + 2);
    }
    for (const char* lead :
         {"syntax error while parsing value - ", "syntax error while parsing object key - ",
          "syntax error while parsing object separator - ", "syntax error while parsing object - ",
          "syntax error while parsing array - "}) {
        if (what.starts_with(lead)) {
            what.erase(0, std::string(lead).size());
            break;
        }
    }
    if (const auto last = what.find("; last read: "); last != std::string::npos) {
        what.erase(last);
    }
    return what;
}

}  // namespace

ParsedJson parse_json(const std::string& text) {
    ParsedJson out;
    json root;
    Diagnostics duplicates;
    auto fail = [&](std::string message) {
        out.value.reset();
        out.problems = Diagnostics{};
        out.problems.add("(document)", std::move(message));
        return std::move(out);
    };
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        return fail(text.empty() ? "the file is empty" : "the file holds only white space");
    }
    try {
        Builder builder(root, duplicates);
        json::sax_parse(text, &builder);
    } catch (const TooDeep&) {
        return fail("arrays and objects are nested deeper than " + std::to_string(kMaxJsonDepth) +
                    " levels, more than any Pipewright file needs");
    } catch (const json::parse_error& e) {
        // e.byte is 1-based: the position of the character that broke parsing.
        const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        return fail("not valid JSON at " + describe_offset(text, offset) + ": " +
                    plain_parse_message(e.what()));
    } catch (const json::out_of_range& e) {
        // A number too large for a double (1e400): said as such.
        std::string what = plain_parse_message(e.what());
        if (const auto at = what.find("number overflow parsing "); at != std::string::npos) {
            what = "the number " + what.substr(at + 24) +
                   " is too large (numbers go up to about 1.8e308)";
        }
        return fail("not usable JSON: " + what);
    } catch (const json::exception& e) {
        return fail("not usable JSON: " + plain_parse_message(e.what()));
    }
    out.value = std::move(root);
    out.problems = std::move(duplicates);
    return out;
}

Diagnostics located_in(const std::filesystem::path& file, const Diagnostics& problems) {
    Diagnostics out;
    for (const auto& item : problems.items()) {
        out.add(item.path.empty() ? file.string() : file.string() + ": " + item.path, item.message);
    }
    return out;
}

nlohmann::json parse_json_file(const std::filesystem::path& path) {
    std::string text;
    try {
        text = read_text_file(path);
    } catch (const std::exception& e) {
        throw InputError("", e.what());
    }
    ParsedJson parsed = parse_json(text);
    if (!parsed.problems.empty()) {
        // A duplicated key makes the file ambiguous: refused like a broken one.
        throw InputError(located_in(path, parsed.problems));
    }
    return std::move(*parsed.value);
}

}  // namespace pipewright
