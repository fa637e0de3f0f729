#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "io/project_json_parallel.h"
#include "pipewright/core/input_limits.h"
#include "pipewright/core/json_reader.h"
#include "pipewright/core/project_io.h"

namespace pipewright {

using nlohmann::json;

namespace {

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;
// Stored as int: a larger value would wrap (and then read "must be at least 1").
constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr NumberRange kMilliseconds{0, limits::kMaxMilliseconds};

std::optional<CostOverride> parse_cost(const JsonObject& r) {
    if (!r.ok()) {
        return std::nullopt;
    }
    r.reject_unknown({"forward_ms", "backward_input_ms", "backward_weight_ms"});
    CostOverride c;
    c.forward_ms = r.number("forward_ms", kOptional, kMilliseconds);
    c.backward_input_ms = r.number("backward_input_ms", kOptional, kMilliseconds);
    c.backward_weight_ms = r.number("backward_weight_ms", kOptional, kMilliseconds);
    return c;
}

LayerSpec parse_layer(const JsonValue& v) {
    LayerSpec layer;
    const JsonObject r(v);
    if (!r.ok()) {
        return layer;
    }
    layer.name = r.string("name", kRequired).value_or("");
    layer.type = r.string("type", kRequired).value_or("");
    if (auto cost = r.field("cost", kOptional)) {
        layer.cost = parse_cost(JsonObject(*cost));
    }
    if (r.has("activation_bytes")) {
        layer.activation_bytes =
            r.integer("activation_bytes", kOptional, 0, limits::kMaxActivationBytes);
    }
    // The rest are hyper-parameters, which the layer catalog checks.
    for (const auto& [key, value] : v.json().items()) {
        if (key != "name" && key != "type" && key != "cost" && key != "activation_bytes") {
            layer.params[key] = value;
        }
    }
    return layer;
}

void parse_input(const JsonObject& in, Model& m) {
    in.reject_unknown({"shape", "dtype"});
    if (auto shape = in.array("shape", kRequired)) {
        for (std::size_t i = 0; i < shape->size(); ++i) {
            const JsonValue dim = shape->element(i);
            if (!dim.json().is_number_integer() || dim.json().get<std::int64_t>() < 1) {
                dim.error("must be a positive whole number, got " + describe_json(dim.json()));
                continue;
            }
            m.input.shape.push_back(dim.json().get<std::int64_t>());
        }
        if (shape->size() == 0) {
            shape->error("needs at least one dimension (per sample)");
        }
    }
    if (auto dtype = in.field("dtype", kOptional)) {
        if (auto text = dtype->string()) {
            auto parsed = parse_dtype(*text);
            if (!parsed || (*parsed != DType::float32 && *parsed != DType::int64)) {
                dtype->error("must be \"float32\" (features) or \"int64\" (token ids), got \"" +
                             *text + "\"");
            } else {
                m.input.dtype = *parsed;
            }
        }
    }
}

Model parse_model(const JsonValue& v) {
    Model m;
    const JsonObject r(v);
    if (!r.ok()) {
        return m;
    }
    r.reject_unknown({"name", "input", "loss", "layers", "tie_word_embeddings"});
    m.name = r.string("name", kOptional).value_or("model");
    if (auto input = r.object("input", kRequired)) {
        parse_input(*input, m);
    }
    if (auto loss = r.one_of<LossKind>(
            "loss", kOptional,
            {{"mse", LossKind::mse}, {"cross_entropy", LossKind::cross_entropy}})) {
        m.loss = *loss;
    }
    m.tie_word_embeddings = r.boolean("tie_word_embeddings", kOptional).value_or(false);
    if (auto layers = r.array("layers", kRequired)) {
        std::set<std::string> seen;
        for (std::size_t i = 0; i < layers->size(); ++i) {
            const JsonValue item = layers->element(i);
            LayerSpec layer = parse_layer(item);
            if (!layer.name.empty() && !seen.insert(layer.name).second) {
                JsonObject(item).error("name", "layer name \"" + layer.name + "\" is used twice");
            }
            m.layers.push_back(std::move(layer));
        }
        if (layers->size() == 0) {
            layers->error("the model needs at least one layer");
        }
    }
    return m;
}

// `extra_key` is a further field the caller reads from the same object.
LinkSpec parse_link(const JsonObject& r, LinkSpec fallback, const char* extra_key = nullptr) {
    if (!r.ok()) {
        return fallback;
    }
    if (extra_key != nullptr) {
        r.reject_unknown({"bandwidth_GBps", "latency_us", "efficiency", extra_key});
    } else {
        r.reject_unknown({"bandwidth_GBps", "latency_us", "efficiency"});
    }
    LinkSpec link = fallback;
    link.bandwidth_GBps = r.number("bandwidth_GBps", kRequired,
                                   {limits::kMinBandwidthGBps, limits::kMaxBandwidthGBps})
                              .value_or(fallback.bandwidth_GBps);
    link.latency_us =
        r.number("latency_us", kOptional, {0, limits::kMaxLatencyUs}).value_or(fallback.latency_us);
    link.efficiency = r.number("efficiency", kOptional, {limits::kMinLinkEfficiency, 1})
                          .value_or(fallback.efficiency);
    return link;
}

Device parse_device(const JsonValue& v) {
    Device dev;
    const JsonObject r(v);
    if (!r.ok()) {
        return dev;
    }
    r.reject_unknown({"name", "spec", "peak_tflops", "memory_GiB"});
    dev.name = r.string("name", kRequired).value_or("");
    dev.spec = r.string("spec", kRequired).value_or("");
    dev.overrides.peak_tflops =
        r.number("peak_tflops", kOptional, {limits::kMinPeakTflops, limits::kMaxPeakTflops});
    dev.overrides.memory_GiB =
        r.number("memory_GiB", kOptional, {limits::kMinMemoryGiB, limits::kMaxMemoryGiB});
    return dev;
}

template <typename Item, typename ParseItem>
std::vector<Item> parse_named_list(const JsonObject& r, const std::string& key,
                                   const std::string& what, ParseItem parse_item) {
    std::vector<Item> out;
    const auto list = r.array(key, kRequired);
    if (!list) {
        return out;
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const JsonValue element = list->element(i);
        Item item = parse_item(element);
        const auto name_error = [&](const std::string& message) {
            JsonValue(element.json(), element.path() + ".name", element.diagnostics())
                .error(message);
        };
        if (item.name.find('/') != std::string::npos) {
            name_error(what + " names cannot contain '/': \"" + item.name + "\"");
        } else if (!item.name.empty() && !names.insert(item.name).second) {
            name_error(what + " name \"" + item.name + "\" is used twice here");
        }
        out.push_back(std::move(item));
    }
    if (list->size() == 0) {
        list->error("needs at least one " + what);
    }
    return out;
}

Topology parse_topology(const JsonValue& v) {
    Topology t;
    const JsonObject r(v);
    if (!r.ok()) {
        return t;
    }
    r.reject_unknown({"links", "link_overrides", "nodes"});
    if (auto links = r.object("links", kOptional)) {
        links->reject_unknown({"intra_container", "intra_node", "inter_node"});
        for (auto [key, link] : {std::pair{"intra_container", &t.links.intra_container},
                                 std::pair{"intra_node", &t.links.intra_node},
                                 std::pair{"inter_node", &t.links.inter_node}}) {
            if (auto l = links->field(key, kOptional)) {
                *link = parse_link(JsonObject(*l), *link);
            }
        }
    }
    t.nodes = parse_named_list<Node>(r, "nodes", "node", [&](const JsonValue& nv) {
        Node node;
        const JsonObject nr(nv);
        if (!nr.ok()) {
            return node;
        }
        nr.reject_unknown({"name", "containers"});
        node.name = nr.string("name", kRequired).value_or("");
        node.containers =
            parse_named_list<Container>(nr, "containers", "container", [&](const JsonValue& cv) {
                Container c;
                const JsonObject cr(cv);
                if (!cr.ok()) {
                    return c;
                }
                cr.reject_unknown({"name", "devices"});
                c.name = cr.string("name", kRequired).value_or("");
                c.devices = parse_named_list<Device>(cr, "devices", "device", parse_device);
                return c;
            });
        return node;
    });
    if (auto overrides = r.array("link_overrides", kOptional)) {
        for (std::size_t i = 0; i < overrides->size(); ++i) {
            const JsonObject orr(overrides->element(i));
            if (!orr.ok()) {
                continue;
            }
            LinkOverride o;
            if (auto between = orr.array("between", kRequired)) {
                const json& b = between->json();
                if (b.size() != 2 || !b[0].is_string() || !b[1].is_string()) {
                    between->error("must name exactly two device paths, got " + describe_json(b));
                } else {
                    o.device_a = b[0].get<std::string>();
                    o.device_b = b[1].get<std::string>();
                }
            }
            o.link = parse_link(orr, LinkSpec{}, "between");
            t.link_overrides.push_back(std::move(o));
        }
    }
    return t;
}

StageAssignment parse_stage(const JsonValue& v, const Model& model) {
    StageAssignment stage;
    const JsonObject r(v);
    if (!r.ok()) {
        return stage;
    }
    r.reject_unknown({"device", "layers"});
    stage.device = r.string("device", kRequired).value_or("");
    const auto layers = r.field("layers", kOptional);
    if (!layers) {
        r.error("layers", "missing (a list of layer names, or {\"from\": ..., \"to\": ...})");
    } else if (layers->json().is_array()) {
        for (std::size_t k = 0; k < layers->size(); ++k) {
            const JsonValue name = layers->element(k);
            if (!name.json().is_string()) {
                name.error("expected a layer name, got " + describe_json(name.json()));
                continue;
            }
            stage.layers.push_back(name.json().get<std::string>());
        }
    } else if (layers->json().is_object()) {
        const JsonObject range(*layers);
        range.reject_unknown({"from", "to"});
        auto from = range.string("from", kRequired);
        auto to = range.string("to", kRequired);
        int a = from ? model.layer_index(*from) : -1;
        int b = to ? model.layer_index(*to) : -1;
        if (from && a < 0) {
            range.error("from", "no layer is named \"" + *from + "\"");
        }
        if (to && b < 0) {
            range.error("to", "no layer is named \"" + *to + "\"");
        }
        if (a >= 0 && b >= 0 && a > b) {
            layers->error("\"" + *from + "\" comes after \"" + *to +
                          "\" in the model; a range goes forward");
        }
        for (int k = a; a >= 0 && k <= b; ++k) {
            stage.layers.push_back(model.layers[static_cast<std::size_t>(k)].name);
        }
    } else {
        layers->error("expected a list of layer names or {\"from\": ..., \"to\": ...}, got " +
                      describe_json(layers->json()));
    }
    return stage;
}

std::vector<StageAssignment> parse_placement(const JsonValue& v, const Model& model) {
    std::vector<StageAssignment> stages;
    if (!v.json().is_array()) {
        v.error("expected a list of stages, got " + describe_json(v.json()));
        return stages;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
        stages.push_back(parse_stage(v.element(i), model));
    }
    return stages;
}

void parse_schedule(const JsonValue& v, Training& t) {
    if (v.json().is_string()) {
        t.schedule.name = v.json().get<std::string>();
    } else if (v.json().is_object()) {
        const JsonObject sr(v);
        sr.reject_unknown({"csv"});
        t.schedule.csv_path = sr.string("csv", kRequired).value_or("");
        t.schedule.name = "csv";
    } else {
        v.error("expected a schedule name such as \"1f1b\" or {\"csv\": \"file.csv\"}, got " +
                describe_json(v.json()));
    }
}

// true or "full", "selective", false or "none".
Recompute read_recompute(const JsonObject& r) {
    const auto v = r.field("activation_checkpointing", kOptional);
    if (!v) {
        return Recompute::none;
    }
    if (v->json().is_boolean()) {
        return v->json().get<bool>() ? Recompute::full : Recompute::none;
    }
    const auto& text = v->json();
    if (text.is_string()) {
        for (const Recompute kind : {Recompute::none, Recompute::selective, Recompute::full}) {
            if (text.get<std::string>() == to_string(kind)) {
                return kind;
            }
        }
    }
    v->error("must be true, false, \"none\", \"selective\" or \"full\", got " +
             (text.is_string() ? text.dump()
                               : "the " + std::string(text.type_name()) + " " + text.dump()));
    return Recompute::none;
}

Training parse_training(const JsonValue& v) {
    Training t;
    const JsonObject r(v);
    if (!r.ok()) {
        return t;
    }
    r.reject_unknown({"batch_size", "microbatches", "microbatch_size", "schedule", "optimizer",
                      "steps", "dtype", "activation_checkpointing", "recompute_blocks",
                      "gradient_accumulation", "gradient_dtype", "attention_kernel", "seed"});
    t.batch_size = static_cast<int>(r.integer("batch_size", kRequired, 1, kIntMax).value_or(1));
    if (auto m = r.integer("microbatches", kOptional, 1, kIntMax)) {
        t.microbatches = static_cast<int>(*m);
    }
    if (auto s = r.integer("microbatch_size", kOptional, 1, kIntMax)) {
        t.microbatch_size = static_cast<int>(*s);
    }
    if (t.microbatches && t.microbatch_size) {
        r.error("microbatch_size", "give either microbatches or microbatch_size, not both");
    }
    if (auto schedule = r.field("schedule", kOptional)) {
        parse_schedule(*schedule, t);
    }
    if (auto o = r.object("optimizer", kOptional)) {
        o->reject_unknown({"type", "lr", "momentum", "weight_decay"});
        if (auto type = o->one_of<OptimizerKind>("type", kOptional,
                                                 {{"sgd", OptimizerKind::sgd},
                                                  {"adam", OptimizerKind::adam},
                                                  {"adamw", OptimizerKind::adamw}})) {
            t.optimizer.type = *type;
        }
        t.optimizer.lr = o->number("lr", kOptional, {0, 1e15, true}).value_or(t.optimizer.lr);
        t.optimizer.momentum = o->number("momentum", kOptional).value_or(0);
        t.optimizer.weight_decay = o->number("weight_decay", kOptional).value_or(0);
    }
    t.steps = static_cast<int>(r.integer("steps", kOptional, 1, kIntMax).value_or(t.steps));
    // float8 keeps bfloat16 everywhere but in the blocks' GEMMs.
    if (auto dtype = r.one_of<std::pair<DType, bool>>("dtype", kOptional,
                                                      {{"float32", {DType::float32, false}},
                                                       {"float16", {DType::float16, false}},
                                                       {"bfloat16", {DType::bfloat16, false}},
                                                       {"float8", {DType::bfloat16, true}}})) {
        std::tie(t.dtype, t.float8) = *dtype;
    }
    t.recompute = read_recompute(r);
    if (auto n = r.integer("recompute_blocks", kOptional, 1, kIntMax)) {
        t.recompute_blocks = static_cast<int>(*n);
    }
    t.gradient_accumulation =
        r.one_of<GradientAccumulation>(
             "gradient_accumulation", kOptional,
             {{to_string(GradientAccumulation::fused), GradientAccumulation::fused},
              {to_string(GradientAccumulation::add), GradientAccumulation::add}})
            .value_or(GradientAccumulation::fused);
    t.gradient_dtype = r.one_of<DType>(
        "gradient_dtype", kOptional,
        {{"float32", DType::float32}, {"bfloat16", DType::bfloat16}, {"float16", DType::float16}});
    if (t.gradient_dtype && *t.gradient_dtype != DType::float32 && *t.gradient_dtype != t.dtype) {
        r.error("gradient_dtype",
                "gradients are held as precisely as the weights or more: \"float32\", or the "
                "training dtype \"" +
                    std::string(to_string(t.dtype)) + "\"");
    }
    t.attention_kernel =
        r.one_of<AttentionKernel>("attention_kernel", kOptional,
                                  {{to_string(AttentionKernel::flash2), AttentionKernel::flash2},
                                   {to_string(AttentionKernel::cudnn), AttentionKernel::cudnn},
                                   {to_string(AttentionKernel::flash3), AttentionKernel::flash3}})
            .value_or(AttentionKernel::flash2);
    t.seed = static_cast<int>(r.integer("seed", kOptional, 0, kIntMax).value_or(0));
    return t;
}

json link_json(const LinkSpec& l) {
    return {{"bandwidth_GBps", l.bandwidth_GBps},
            {"latency_us", l.latency_us},
            {"efficiency", l.efficiency}};
}

}  // namespace

std::optional<Project> project_from_json(const json& j, Diagnostics& d) {
    const JsonObject r(j, d);
    if (!r.expect_format(Project::kFormat, Project::kVersion)) {
        return std::nullopt;
    }
    r.reject_unknown({"format", "version", "model", "topology", "placement", "training",
                      "data_parallel", "tensor_parallel", "expert_parallel", "context_parallel"});
    Project p;
    if (auto model = r.field("model", kRequired)) {
        p.model = parse_model(*model);
    }
    if (auto topology = r.field("topology", kRequired)) {
        p.topology = parse_topology(*topology);
    }
    if (auto placement = r.field("placement", kRequired)) {
        p.placement = parse_placement(*placement, p.model);
    }
    if (auto training = r.field("training", kRequired)) {
        p.training = parse_training(*training);
    }
    parse_parallelism(r, p);
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
    training["dtype"] = t.precision_name();
    // true and false as before selective recomputation existed.
    if (t.recompute == Recompute::selective) {
        training["activation_checkpointing"] = "selective";
    } else {
        training["activation_checkpointing"] = t.full_recompute();
    }
    if (t.recompute_blocks) {
        training["recompute_blocks"] = *t.recompute_blocks;
    }
    // Only when not the default, so files written before it read back alike.
    if (t.gradient_accumulation != GradientAccumulation::fused) {
        training["gradient_accumulation"] = to_string(t.gradient_accumulation);
    }
    if (t.gradient_dtype) {
        training["gradient_dtype"] = to_string(*t.gradient_dtype);
    }
    if (t.attention_kernel != AttentionKernel::flash2) {
        training["attention_kernel"] = to_string(t.attention_kernel);
    }
    training["seed"] = t.seed;
    json out = {
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
    if (p.model.tie_word_embeddings) {
        out["model"]["tie_word_embeddings"] = true;
    }
    write_parallelism(p, out);
    return out;
}

}  // namespace pipewright
