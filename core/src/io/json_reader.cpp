#include "pipewright/core/json_reader.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace pipewright {

namespace {

constexpr std::size_t kMaxShownChars = 60;

std::string shortened(std::string text) {
    if (text.size() > kMaxShownChars) {
        text = text.substr(0, kMaxShownChars - 3) + "...";
    }
    return text;
}

// Compact JSON text; invalid UTF-8 in a string (possible in a document built
// by a program rather than parsed) is replaced instead of throwing.
std::string dump(const nlohmann::json& value) {
    return shortened(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// Only what a number is: the kind is known when a range is violated.
std::string show_number(const nlohmann::json& value) {
    return dump(value);
}

std::string choices_text(const std::vector<std::string_view>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) {
            out += i + 1 == names.size() ? " or " : ", ";
        }
        out += "\"" + std::string(names[i]) + "\"";
    }
    return out;
}

}  // namespace

std::string describe_json(const nlohmann::json& value) {
    if (value.is_null()) {
        return "null";
    }
    if (value.is_boolean()) {
        return value.get<bool>() ? "true" : "false";
    }
    if (value.is_number()) {
        return "the number " + show_number(value);
    }
    if (value.is_string()) {
        return "the string " + dump(value);
    }
    if (value.is_array()) {
        return "an array " + dump(value);
    }
    return "an object " + dump(value);
}

std::string show_limit(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.15g", value);
    return buffer;
}

// ---- JsonValue --------------------------------------------------------------

JsonValue::JsonValue(const nlohmann::json& value, std::string path, Diagnostics& diagnostics)
    : value_(&value), path_(std::move(path)), diagnostics_(&diagnostics) {}

std::string JsonValue::where() const {
    return path_.empty() ? "(document)" : path_;
}

void JsonValue::error(const std::string& message) const {
    if (!full()) {
        diagnostics_->add(where(), message);
    }
}

bool JsonValue::full() const {
    return diagnostics_->size() >= kMaxJsonProblems;
}

void JsonValue::type_error(const char* expected) const {
    error(std::string("expected ") + expected + ", got " + describe_json(*value_));
}

void JsonValue::choice_error(const std::vector<std::string_view>& names,
                             const std::string& got) const {
    error("must be " + choices_text(names) + ", got " + dump(nlohmann::json(got)));
}

std::optional<std::string> JsonValue::string() const {
    if (!value_->is_string()) {
        type_error("a string");
        return std::nullopt;
    }
    return value_->get<std::string>();
}

std::optional<double> JsonValue::number(NumberRange range) const {
    // A document built by a program may hold infinities; parsed text cannot.
    if (!value_->is_number() || !std::isfinite(value_->get<double>())) {
        type_error("a number");
        return std::nullopt;
    }
    const double x = value_->get<double>();
    const std::string got = ", got " + show_number(*value_);
    if (range.exclusive_min) {
        if (!(x > range.min)) {
            error("must be greater than " + show_limit(range.min) + got);
            return std::nullopt;
        }
        if (x > range.max) {
            error("must be at most " + show_limit(range.max) + got);
            return std::nullopt;
        }
    } else if (x < range.min || x > range.max) {
        error("must be a number from " + show_limit(range.min) + " to " + show_limit(range.max) +
              got);
        return std::nullopt;
    }
    return x;
}

std::optional<std::int64_t> JsonValue::integer(std::int64_t min, std::int64_t max) const {
    if (!value_->is_number_integer()) {
        type_error("a whole number");
        return std::nullopt;
    }
    const std::string got = ", got " + show_number(*value_);
    // Unsigned first: above 2^63 the signed view would wrap negative.
    if (value_->is_number_unsigned()) {
        if (value_->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
            error("must be at most " + std::to_string(max) + got);
            return std::nullopt;
        }
    } else if (value_->get<std::int64_t>() > max) {
        error("must be at most " + std::to_string(max) + got);
        return std::nullopt;
    }
    const auto x = value_->get<std::int64_t>();
    if (x < min) {
        error("must be at least " + std::to_string(min) + got);
        return std::nullopt;
    }
    return x;
}

std::optional<bool> JsonValue::boolean() const {
    if (!value_->is_boolean()) {
        type_error("true or false");
        return std::nullopt;
    }
    return value_->get<bool>();
}

bool JsonValue::array() const {
    if (!value_->is_array()) {
        type_error("an array");
        return false;
    }
    return true;
}

std::size_t JsonValue::size() const {
    return value_->is_array() ? value_->size() : 0;
}

JsonValue JsonValue::element(std::size_t i) const {
    return JsonValue((*value_)[i], path_ + "[" + std::to_string(i) + "]", *diagnostics_);
}

JsonObject JsonValue::object() const {
    return JsonObject(*this);
}

// ---- JsonObject -------------------------------------------------------------

JsonObject::JsonObject(const JsonValue& value) : value_(value), ok_(value.json().is_object()) {
    if (!ok_) {
        value_.error("expected a JSON object, got " + describe_json(value_.json()));
    }
}

JsonObject::JsonObject(const nlohmann::json& document, Diagnostics& diagnostics)
    : JsonObject(JsonValue(document, "", diagnostics)) {}

std::string JsonObject::field_path(std::string_view key) const {
    return path().empty() ? std::string(key) : path() + "." + std::string(key);
}

bool JsonObject::has(std::string_view key) const {
    return ok_ && value_.json().contains(key);
}

std::optional<JsonValue> JsonObject::field(std::string_view key, Need need) const {
    if (!ok_) {
        return std::nullopt;
    }
    const auto it = value_.json().find(key);
    if (it == value_.json().end()) {
        if (need == Need::required) {
            error(key, "missing");
        }
        return std::nullopt;
    }
    return JsonValue(*it, field_path(key), value_.diagnostics());
}

std::optional<JsonValue> JsonObject::typed_field(std::string_view key, Need need,
                                                 const char* kind) const {
    if (!ok_) {
        return std::nullopt;
    }
    if (need == Need::required && !has(key)) {
        error(key, std::string("missing (") + kind + " is required)");
        return std::nullopt;
    }
    return field(key, Need::optional);
}

std::optional<std::string> JsonObject::string(std::string_view key, Need need) const {
    auto v = typed_field(key, need, "a string");
    return v ? v->string() : std::nullopt;
}

std::optional<double> JsonObject::number(std::string_view key, Need need, NumberRange range) const {
    auto v = typed_field(key, need, "a number");
    return v ? v->number(range) : std::nullopt;
}

std::optional<std::int64_t> JsonObject::integer(std::string_view key, Need need, std::int64_t min,
                                                std::int64_t max) const {
    auto v = typed_field(key, need, "a whole number");
    return v ? v->integer(min, max) : std::nullopt;
}

std::optional<bool> JsonObject::boolean(std::string_view key, Need need) const {
    auto v = typed_field(key, need, "true or false");
    return v ? v->boolean() : std::nullopt;
}

std::optional<JsonValue> JsonObject::array(std::string_view key, Need need) const {
    auto v = typed_field(key, need, "an array");
    if (v && !v->array()) {
        return std::nullopt;
    }
    return v;
}

std::optional<JsonObject> JsonObject::object(std::string_view key, Need need) const {
    auto v = typed_field(key, need, "a JSON object");
    if (!v) {
        return std::nullopt;
    }
    JsonObject o(*v);
    if (!o.ok()) {
        return std::nullopt;
    }
    return o;
}

bool JsonObject::expect_format(std::string_view format, std::int64_t version) const {
    if (!ok_) {
        return false;
    }
    const std::string wanted = "\"" + std::string(format) + "\"";
    const auto f = field("format", Need::optional);
    if (!f) {
        error("format", "missing: not a " + std::string(format) +
                            " file (it would say \"format\": " + wanted + ")");
        return false;
    }
    auto text = f->string();
    if (!text) {
        return false;
    }
    if (*text != format) {
        // Name what it is: a timeline given where a profile belongs is a
        // mix-up of files, not a broken file.
        f->error("must be " + wanted + ", got " + dump(nlohmann::json(*text)));
        return false;
    }
    auto v = integer("version", Need::required, 0, std::numeric_limits<std::int64_t>::max());
    if (!v) {
        return false;
    }
    if (*v != version) {
        error("version", "this Pipewright reads version " + std::to_string(version) + " of " +
                             std::string(format) + ", got version " + std::to_string(*v));
        return false;
    }
    return true;
}

void JsonObject::reject_unknown(std::initializer_list<std::string_view> known) const {
    if (!ok_) {
        return;
    }
    for (const auto& [key, value] : value_.json().items()) {
        bool ok = false;
        for (std::string_view k : known) {
            ok = ok || key == k;
        }
        if (!ok) {
            std::string list;
            for (std::string_view k : known) {
                list += (list.empty() ? "" : ", ") + std::string(k);
            }
            error(key, "unknown field (expected one of: " + list + ")");
        }
    }
}

void JsonObject::error(std::string_view key, const std::string& message) const {
    JsonValue(value_.json(), field_path(key), value_.diagnostics()).error(message);
}

}  // namespace pipewright
