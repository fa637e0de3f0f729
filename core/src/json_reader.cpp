#include "json_reader.h"

#include <cmath>
#include <cstdio>

namespace pipewright::detail {

std::string describe(const nlohmann::json& value) {
    std::string text = value.dump();
    if (text.size() > 60) {
        text = text.substr(0, 57) + "...";
    }
    return text;
}

std::string show_limit(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.15g", value);
    return buffer;
}

ObjectReader::ObjectReader(const nlohmann::json& j, std::string path, Diagnostics& diagnostics)
    : path_(std::move(path)), diagnostics_(diagnostics) {
    if (j.is_object()) {
        object_ = &j;
    } else {
        diagnostics_.add(path_.empty() ? "(document)" : path_,
                         "must be a JSON object, got " + describe(j));
    }
}

std::string ObjectReader::field_path(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
}

bool ObjectReader::has(const std::string& key) const {
    return object_ != nullptr && object_->contains(key);
}

const nlohmann::json* ObjectReader::get(const std::string& key) const {
    if (!has(key)) {
        return nullptr;
    }
    return &object_->at(key);
}

void ObjectReader::error(const std::string& key, const std::string& message) {
    diagnostics_.add(field_path(key), message);
}

std::optional<std::string> ObjectReader::string(const std::string& key, bool required) {
    const auto* v = get(key);
    if (v == nullptr) {
        if (required && object_ != nullptr) {
            error(key, "missing (a text value is required)");
        }
        return std::nullopt;
    }
    if (!v->is_string()) {
        error(key, "must be text, got " + describe(*v));
        return std::nullopt;
    }
    return v->get<std::string>();
}

std::optional<double> ObjectReader::number(const std::string& key, bool required,
                                           double min_exclusive, double max) {
    const auto* v = get(key);
    if (v == nullptr) {
        if (required && object_ != nullptr) {
            error(key, "missing (a number is required)");
        }
        return std::nullopt;
    }
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
        error(key, "must be a number, got " + describe(*v));
        return std::nullopt;
    }
    double x = v->get<double>();
    if (!(x > min_exclusive)) {
        error(key, "must be greater than " + describe(nlohmann::json(min_exclusive)) + ", got " +
                       describe(*v));
        return std::nullopt;
    }
    if (x > max) {
        error(key, "must be at most " + show_limit(max) + ", got " + describe(*v));
        return std::nullopt;
    }
    return x;
}

std::optional<double> ObjectReader::in_range(const std::string& key, bool required, double min,
                                             double max) {
    const auto* v = get(key);
    if (v == nullptr) {
        if (required && object_ != nullptr) {
            error(key, "missing (a number is required)");
        }
        return std::nullopt;
    }
    const double x = v->is_number() ? v->get<double>() : 0.0;
    if (!v->is_number() || !std::isfinite(x) || x < min || x > max) {
        error(key, "must be a number from " + show_limit(min) + " to " + show_limit(max) +
                       ", got " + describe(*v));
        return std::nullopt;
    }
    return x;
}

std::optional<double> ObjectReader::non_negative(const std::string& key, bool required,
                                                 double max) {
    const auto* v = get(key);
    if (v != nullptr && v->is_number() && v->get<double>() == 0.0) {
        return 0.0;
    }
    return number(key, required, 0.0, max);
}

std::optional<std::int64_t> ObjectReader::integer(const std::string& key, bool required,
                                                  std::int64_t min, std::int64_t max) {
    const auto* v = get(key);
    if (v == nullptr) {
        if (required && object_ != nullptr) {
            error(key, "missing (a whole number is required)");
        }
        return std::nullopt;
    }
    if (!v->is_number_integer()) {
        error(key, "must be a whole number, got " + describe(*v));
        return std::nullopt;
    }
    auto x = v->get<std::int64_t>();
    // Unsigned first: above 2^63 the signed view would wrap negative.
    if ((v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) ||
        x > max) {
        error(key,
              "is too large: must be at most " + std::to_string(max) + ", got " + describe(*v));
        return std::nullopt;
    }
    if (x < min) {
        error(key, "must be at least " + std::to_string(min) + ", got " + describe(*v));
        return std::nullopt;
    }
    return x;
}

std::optional<bool> ObjectReader::boolean(const std::string& key) {
    const auto* v = get(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->is_boolean()) {
        error(key, "must be true or false, got " + describe(*v));
        return std::nullopt;
    }
    return v->get<bool>();
}

const nlohmann::json* ObjectReader::array(const std::string& key, bool required) {
    const auto* v = get(key);
    if (v == nullptr) {
        if (required && object_ != nullptr) {
            error(key, "missing (a list is required)");
        }
        return nullptr;
    }
    if (!v->is_array()) {
        error(key, "must be a list, got " + describe(*v));
        return nullptr;
    }
    return v;
}

const nlohmann::json* ObjectReader::object(const std::string& key, bool required) {
    const auto* v = get(key);
    if (v == nullptr) {
        if (required && object_ != nullptr) {
            error(key, "missing (an object is required)");
        }
        return nullptr;
    }
    if (!v->is_object()) {
        error(key, "must be an object, got " + describe(*v));
        return nullptr;
    }
    return v;
}

void ObjectReader::reject_unknown(std::initializer_list<const char*> known) {
    if (object_ == nullptr) {
        return;
    }
    for (const auto& [key, value] : object_->items()) {
        bool ok = false;
        for (const char* k : known) {
            if (key == k) {
                ok = true;
                break;
            }
        }
        if (!ok) {
            std::string list;
            for (const char* k : known) {
                list += (list.empty() ? "" : ", ") + std::string(k);
            }
            error(key, "unknown field (expected one of: " + list + ")");
        }
    }
}

}  // namespace pipewright::detail
