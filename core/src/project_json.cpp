#include <limits>
#include <set>

#include "json_reader.h"
#include "pipewright/core/input_limits.h"
#include "pipewright/core/project_io.h"

namespace pipewright {

using detail::describe;
using detail::ObjectReader;
using nlohmann::json;

namespace {

std::string index_path(const std::string& base, std::size_t i) {
    return base + "[" + std::to_string(i) + "]";
}

std::optional<CostOverride> parse_cost(const json& j, const std::string& path, Diagnostics& d) {
    ObjectReader r(j, path, d);
    if (!r.is_object()) {
        return std::nullopt;
    }
    r.reject_unknown({"forward_ms", "backward_input_ms", "backward_weight_ms"});
    CostOverride c;
    c.forward_ms = r.non_negative("forward_ms", false, limits::kMaxMilliseconds);
    c.backward_input_ms = r.non_negative("backward_input_ms", false, limits::kMaxMilliseconds);
    c.backward_weight_ms = r.non_negative("backward_weight_ms", false, limits::kMaxMilliseconds);
    return c;
}

LayerSpec parse_layer(const json& j, const std::string& path, Diagnostics& d) {
    LayerSpec layer;
    ObjectReader r(j, path, d);
    if (!r.is_object()) {
        return layer;
    }
    layer.name = r.string("name", true).value_or("");
    layer.type = r.string("type", true).value_or("");
    if (const auto* cost = r.get("cost")) {
        layer.cost = parse_cost(*cost, r.field_path("cost"), d);
    }
    if (r.has("activation_bytes")) {
        layer.activation_bytes =
            r.integer("activation_bytes", false, 0, limits::kMaxActivationBytes);
    }
    for (const auto& [key, value] : j.items()) {
        if (key != "name" && key != "type" && key != "cost" && key != "activation_bytes") {
            layer.params[key] = value;
        }
    }
    return layer;
}

Model parse_model(const json& j, Diagnostics& d) {
    Model m;
    ObjectReader r(j, "model", d);
    if (!r.is_object()) {
        return m;
    }
    r.reject_unknown({"name", "input", "loss", "layers"});
    m.name = r.string("name", false).value_or("model");
    if (const auto* input = r.object("input", true)) {
        ObjectReader in(*input, "model.input", d);
        in.reject_unknown({"shape", "dtype"});
        if (const auto* shape = in.array("shape", true)) {
            for (std::size_t i = 0; i < shape->size(); ++i) {
                const auto& dim = (*shape)[i];
                if (!dim.is_number_integer() || dim.get<std::int64_t>() < 1) {
                    d.add(index_path("model.input.shape", i),
                          "must be a positive whole number, got " + describe(dim));
                    continue;
                }
                m.input.shape.push_back(dim.get<std::int64_t>());
            }
            if (shape->empty()) {
                d.add("model.input.shape", "needs at least one dimension (per sample)");
            }
        }
        if (auto dtype = in.string("dtype", false)) {
            auto parsed = parse_dtype(*dtype);
            if (!parsed || (*parsed != DType::float32 && *parsed != DType::int64)) {
                in.error("dtype",
                         "must be \"float32\" (features) or \"int64\" (token ids), got \"" +
                             *dtype + "\"");
            } else {
                m.input.dtype = *parsed;
            }
        }
    }
    if (auto loss = r.string("loss", false)) {
        if (auto parsed = parse_loss(*loss)) {
            m.loss = *parsed;
        } else {
            r.error("loss", "must be \"mse\" or \"cross_entropy\", got \"" + *loss + "\"");
        }
    }
    if (const auto* layers = r.array("layers", true)) {
        std::set<std::string> seen;
        for (std::size_t i = 0; i < layers->size(); ++i) {
            const std::string path = index_path("model.layers", i);
            LayerSpec layer = parse_layer((*layers)[i], path, d);
            if (!layer.name.empty() && !seen.insert(layer.name).second) {
                d.add(path + ".name", "layer name \"" + layer.name + "\" is used twice");
            }
            m.layers.push_back(std::move(layer));
        }
        if (layers->empty()) {
            d.add("model.layers", "the model needs at least one layer");
        }
    }
    return m;
}

// `extra_key` is a further field the caller reads from the same object.
LinkSpec parse_link(const json& j, const std::string& path, Diagnostics& d, LinkSpec fallback,
                    const char* extra_key = nullptr) {
    ObjectReader r(j, path, d);
    if (!r.is_object()) {
        return fallback;
    }
    if (extra_key != nullptr) {
        r.reject_unknown({"bandwidth_GBps", "latency_us", extra_key});
    } else {
        r.reject_unknown({"bandwidth_GBps", "latency_us"});
    }
    LinkSpec link = fallback;
    link.bandwidth_GBps =
        r.in_range("bandwidth_GBps", true, limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps)
            .value_or(fallback.bandwidth_GBps);
    link.latency_us =
        r.non_negative("latency_us", false, limits::kMaxLatencyUs).value_or(fallback.latency_us);
    return link;
}

Device parse_device(const json& j, const std::string& path, Diagnostics& d) {
    Device dev;
    ObjectReader r(j, path, d);
    if (!r.is_object()) {
        return dev;
    }
    r.reject_unknown({"name", "spec", "peak_tflops", "memory_GiB"});
    dev.name = r.string("name", true).value_or("");
    dev.spec = r.string("spec", true).value_or("");
    dev.overrides.peak_tflops =
        r.in_range("peak_tflops", false, limits::kMinPeakTflops, limits::kMaxPeakTflops);
    dev.overrides.memory_GiB =
        r.in_range("memory_GiB", false, limits::kMinMemoryGiB, limits::kMaxMemoryGiB);
    return dev;
}

template <typename Item, typename ParseItem>
std::vector<Item> parse_named_list(ObjectReader& r, const std::string& key, const std::string& what,
                                   Diagnostics& d, ParseItem parse_item) {
    std::vector<Item> out;
    const auto* list = r.array(key, true);
    if (list == nullptr) {
        return out;
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string path = index_path(r.field_path(key), i);
        Item item = parse_item((*list)[i], path);
        if (item.name.find('/') != std::string::npos) {
            d.add(path + ".name", what + " names cannot contain '/': \"" + item.name + "\"");
        } else if (!item.name.empty() && !names.insert(item.name).second) {
            d.add(path + ".name", what + " name \"" + item.name + "\" is used twice here");
        }
        out.push_back(std::move(item));
    }
    if (list->empty()) {
        d.add(r.field_path(key), "needs at least one " + what);
    }
    return out;
}

Topology parse_topology(const json& j, Diagnostics& d) {
    Topology t;
    ObjectReader r(j, "topology", d);
    if (!r.is_object()) {
        return t;
    }
    r.reject_unknown({"links", "link_overrides", "nodes"});
    if (const auto* links = r.object("links", false)) {
        ObjectReader lr(*links, "topology.links", d);
        lr.reject_unknown({"intra_container", "intra_node", "inter_node"});
        if (const auto* l = lr.get("intra_container")) {
            t.links.intra_container =
                parse_link(*l, "topology.links.intra_container", d, t.links.intra_container);
        }
        if (const auto* l = lr.get("intra_node")) {
            t.links.intra_node = parse_link(*l, "topology.links.intra_node", d, t.links.intra_node);
        }
        if (const auto* l = lr.get("inter_node")) {
            t.links.inter_node = parse_link(*l, "topology.links.inter_node", d, t.links.inter_node);
        }
    }
    t.nodes = parse_named_list<Node>(
        r, "nodes", "node", d, [&](const json& nj, const std::string& npath) {
            Node node;
            ObjectReader nr(nj, npath, d);
            if (!nr.is_object()) {
                return node;
            }
            nr.reject_unknown({"name", "containers"});
            node.name = nr.string("name", true).value_or("");
            node.containers = parse_named_list<Container>(
                nr, "containers", "container", d, [&](const json& cj, const std::string& cpath) {
                    Container c;
                    ObjectReader cr(cj, cpath, d);
                    if (!cr.is_object()) {
                        return c;
                    }
                    cr.reject_unknown({"name", "devices"});
                    c.name = cr.string("name", true).value_or("");
                    c.devices = parse_named_list<Device>(
                        cr, "devices", "device", d, [&](const json& dj, const std::string& dpath) {
                            return parse_device(dj, dpath, d);
                        });
                    return c;
                });
            return node;
        });
    if (const auto* overrides = r.array("link_overrides", false)) {
        for (std::size_t i = 0; i < overrides->size(); ++i) {
            const std::string path = index_path("topology.link_overrides", i);
            ObjectReader orr((*overrides)[i], path, d);
            if (!orr.is_object()) {
                continue;
            }
            LinkOverride o;
            const auto* between = orr.array("between", true);
            if (between != nullptr) {
                if (between->size() != 2 || !(*between)[0].is_string() ||
                    !(*between)[1].is_string()) {
                    d.add(path + ".between", "must name exactly two device paths");
                } else {
                    o.device_a = (*between)[0].get<std::string>();
                    o.device_b = (*between)[1].get<std::string>();
                }
            }
            o.link = parse_link((*overrides)[i], path, d, LinkSpec{}, "between");
            t.link_overrides.push_back(std::move(o));
        }
    }
    return t;
}

std::vector<StageAssignment> parse_placement(const json& j, const Model& model, Diagnostics& d) {
    std::vector<StageAssignment> stages;
    if (!j.is_array()) {
        d.add("placement", "must be a list of stages, got " + describe(j));
        return stages;
    }
    for (std::size_t i = 0; i < j.size(); ++i) {
        const std::string path = index_path("placement", i);
        ObjectReader r(j[i], path, d);
        StageAssignment stage;
        if (!r.is_object()) {
            stages.push_back(stage);
            continue;
        }
        r.reject_unknown({"device", "layers"});
        stage.device = r.string("device", true).value_or("");
        const json* layers = r.get("layers");
        if (layers == nullptr) {
            r.error("layers", "missing (a list of layer names, or {\"from\": ..., \"to\": ...})");
        } else if (layers->is_array()) {
            for (std::size_t k = 0; k < layers->size(); ++k) {
                if (!(*layers)[k].is_string()) {
                    d.add(index_path(path + ".layers", k),
                          "must be a layer name, got " + describe((*layers)[k]));
                    continue;
                }
                stage.layers.push_back((*layers)[k].get<std::string>());
            }
        } else if (layers->is_object()) {
            ObjectReader range(*layers, path + ".layers", d);
            range.reject_unknown({"from", "to"});
            auto from = range.string("from", true);
            auto to = range.string("to", true);
            int a = from ? model.layer_index(*from) : -1;
            int b = to ? model.layer_index(*to) : -1;
            if (from && a < 0) {
                range.error("from", "no layer is named \"" + *from + "\"");
            }
            if (to && b < 0) {
                range.error("to", "no layer is named \"" + *to + "\"");
            }
            if (a >= 0 && b >= 0 && a > b) {
                d.add(path + ".layers", "\"" + *from + "\" comes after \"" + *to +
                                            "\" in the model; a range goes forward");
            }
            for (int k = a; a >= 0 && k <= b; ++k) {
                stage.layers.push_back(model.layers[static_cast<std::size_t>(k)].name);
            }
        } else {
            r.error("layers", "must be a list of layer names or {\"from\": ..., \"to\": ...}");
        }
        stages.push_back(std::move(stage));
    }
    return stages;
}

Training parse_training(const json& j, Diagnostics& d) {
    Training t;
    ObjectReader r(j, "training", d);
    if (!r.is_object()) {
        return t;
    }
    r.reject_unknown({"batch_size", "microbatches", "microbatch_size", "schedule", "optimizer",
                      "steps", "dtype", "activation_checkpointing", "seed"});
    // Stored as int: a larger value would wrap (and then read "must be at least 1").
    constexpr std::int64_t int_max = std::numeric_limits<int>::max();
    t.batch_size = static_cast<int>(r.integer("batch_size", true, 1, int_max).value_or(1));
    if (auto m = r.integer("microbatches", false, 1, int_max)) {
        t.microbatches = static_cast<int>(*m);
    }
    if (auto s = r.integer("microbatch_size", false, 1, int_max)) {
        t.microbatch_size = static_cast<int>(*s);
    }
    if (t.microbatches && t.microbatch_size) {
        r.error("microbatch_size", "give either microbatches or microbatch_size, not both");
    }
    if (const auto* schedule = r.get("schedule")) {
        if (schedule->is_string()) {
            t.schedule.name = schedule->get<std::string>();
        } else if (schedule->is_object()) {
            ObjectReader sr(*schedule, "training.schedule", d);
            sr.reject_unknown({"csv"});
            t.schedule.csv_path = sr.string("csv", true).value_or("");
            t.schedule.name = "csv";
        } else {
            r.error("schedule",
                    "must be a schedule name such as \"1f1b\" or {\"csv\": \"file.csv\"}");
        }
    }
    if (const auto* opt = r.object("optimizer", false)) {
        ObjectReader o(*opt, "training.optimizer", d);
        o.reject_unknown({"type", "lr", "momentum", "weight_decay"});
        if (auto type = o.string("type", false)) {
            if (auto k = parse_optimizer(*type)) {
                t.optimizer.type = *k;
            } else {
                o.error("type", "must be \"sgd\", \"adam\" or \"adamw\", got \"" + *type + "\"");
            }
        }
        t.optimizer.lr = o.number("lr", false, 0).value_or(t.optimizer.lr);
        t.optimizer.momentum = o.non_negative("momentum", false).value_or(0);
        t.optimizer.weight_decay = o.non_negative("weight_decay", false).value_or(0);
    }
    t.steps = static_cast<int>(r.integer("steps", false, 1, int_max).value_or(t.steps));
    if (auto dtype = r.string("dtype", false)) {
        auto parsed = parse_dtype(*dtype);
        if (!parsed || *parsed == DType::int64) {
            r.error("dtype",
                    "must be \"float32\", \"float16\" or \"bfloat16\", got \"" + *dtype + "\"");
        } else {
            t.dtype = *parsed;
        }
    }
    t.activation_checkpointing = r.boolean("activation_checkpointing").value_or(false);
    t.seed = static_cast<int>(r.integer("seed", false, 0, int_max).value_or(0));
    return t;
}

json link_json(const LinkSpec& l) {
    return {{"bandwidth_GBps", l.bandwidth_GBps}, {"latency_us", l.latency_us}};
}

}  // namespace

std::optional<Project> project_from_json(const json& j, Diagnostics& d) {
    ObjectReader r(j, "", d);
    if (!r.is_object()) {
        return std::nullopt;
    }
    r.reject_unknown({"format", "version", "model", "topology", "placement", "training"});
    auto format = r.string("format", true);
    if (format && *format != Project::kFormat) {
        r.error("format", "must be \"pipewright-project\", got \"" + *format + "\"");
    }
    if (auto version = r.integer("version", true, 1); version && *version != Project::kVersion) {
        r.error("version",
                "this Pipewright reads version 1 files, got version " + std::to_string(*version));
    }
    Project p;
    if (const auto* model = r.get("model")) {
        p.model = parse_model(*model, d);
    } else {
        d.add("model", "missing");
    }
    if (const auto* topology = r.get("topology")) {
        p.topology = parse_topology(*topology, d);
    } else {
        d.add("topology", "missing");
    }
    if (const auto* placement = r.get("placement")) {
        p.placement = parse_placement(*placement, p.model, d);
    } else {
        d.add("placement", "missing");
    }
    if (const auto* training = r.get("training")) {
        p.training = parse_training(*training, d);
    } else {
        d.add("training", "missing");
    }
    return p;
}

json project_to_json(const Project& p) {
    json layers = json::array();
    for (const auto& l : p.model.layers) {
        json lj = {{"name", l.name}, {"type", l.type}};
        for (const auto& [key, value] : l.params.items()) {
            lj[key] = value;
        }
        if (l.cost) {
            json c = json::object();
            if (l.cost->forward_ms) {
                c["forward_ms"] = *l.cost->forward_ms;
            }
            if (l.cost->backward_input_ms) {
                c["backward_input_ms"] = *l.cost->backward_input_ms;
            }
            if (l.cost->backward_weight_ms) {
                c["backward_weight_ms"] = *l.cost->backward_weight_ms;
            }
            lj["cost"] = c;
        }
        if (l.activation_bytes) {
            lj["activation_bytes"] = *l.activation_bytes;
        }
        layers.push_back(std::move(lj));
    }
    json nodes = json::array();
    for (const auto& n : p.topology.nodes) {
        json containers = json::array();
        for (const auto& c : n.containers) {
            json devices = json::array();
            for (const auto& dev : c.devices) {
                json dj = {{"name", dev.name}, {"spec", dev.spec}};
                if (dev.overrides.peak_tflops) {
                    dj["peak_tflops"] = *dev.overrides.peak_tflops;
                }
                if (dev.overrides.memory_GiB) {
                    dj["memory_GiB"] = *dev.overrides.memory_GiB;
                }
                devices.push_back(std::move(dj));
            }
            containers.push_back({{"name", c.name}, {"devices", devices}});
        }
        nodes.push_back({{"name", n.name}, {"containers", containers}});
    }
    json topology = {{"links",
                      {{"intra_container", link_json(p.topology.links.intra_container)},
                       {"intra_node", link_json(p.topology.links.intra_node)},
                       {"inter_node", link_json(p.topology.links.inter_node)}}},
                     {"nodes", nodes}};
    if (!p.topology.link_overrides.empty()) {
        json overrides = json::array();
        for (const auto& o : p.topology.link_overrides) {
            json oj = link_json(o.link);
            oj["between"] = {o.device_a, o.device_b};
            overrides.push_back(std::move(oj));
        }
        topology["link_overrides"] = overrides;
    }
    json placement = json::array();
    for (const auto& s : p.placement) {
        placement.push_back({{"device", s.device}, {"layers", s.layers}});
    }
    const Training& t = p.training;
    json training = {{"batch_size", t.batch_size}};
    if (t.microbatches) {
        training["microbatches"] = *t.microbatches;
    }
    if (t.microbatch_size) {
        training["microbatch_size"] = *t.microbatch_size;
    }
    if (t.schedule.from_csv()) {
        training["schedule"] = {{"csv", t.schedule.csv_path}};
    } else {
        training["schedule"] = t.schedule.name;
    }
    training["optimizer"] = {{"type", to_string(t.optimizer.type)},
                             {"lr", t.optimizer.lr},
                             {"momentum", t.optimizer.momentum},
                             {"weight_decay", t.optimizer.weight_decay}};
    training["steps"] = t.steps;
    training["dtype"] = to_string(t.dtype);
    training["activation_checkpointing"] = t.activation_checkpointing;
    training["seed"] = t.seed;
    return {
        {"format", Project::kFormat},
        {"version", Project::kVersion},
        {"model",
         {{"name", p.model.name},
          {"input", {{"shape", p.model.input.shape}, {"dtype", to_string(p.model.input.dtype)}}},
          {"loss", to_string(p.model.loss)},
          {"layers", layers}}},
        {"topology", topology},
        {"placement", placement},
        {"training", training}};
}

}  // namespace pipewright
