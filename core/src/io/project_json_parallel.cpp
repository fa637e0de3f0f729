#include "io/project_json_parallel.h"

#include <string>
#include <utility>
#include <vector>

namespace pipewright {

using nlohmann::json;

namespace {

constexpr Need kRequired = Need::required;
constexpr Need kOptional = Need::optional;

DataParallel parse_data_parallel(const JsonValue& v) {
    DataParallel dp;
    const JsonObject r(v);
    if (!r.ok()) {
        return dp;
    }
    r.reject_unknown({"size", "zero_stage", "overlap_gradient_sync", "bucket_MiB", "replicas"});
    dp.size = static_cast<int>(r.integer("size", kRequired, 1, 1'000'000).value_or(1));
    dp.zero_stage =
        static_cast<int>(r.integer("zero_stage", kOptional, 0, kMaxZeroStage).value_or(0));
    dp.overlap_gradient_sync = r.boolean("overlap_gradient_sync", kOptional).value_or(true);
    dp.bucket_MiB = r.number("bucket_MiB", kOptional, {0, 1e6, true}).value_or(dp.bucket_MiB);
    if (auto replicas = r.array("replicas", kOptional)) {
        for (std::size_t i = 0; i < replicas->size(); ++i) {
            const JsonValue replica = replicas->element(i);
            std::vector<std::string> devices;
            if (replica.array()) {
                for (std::size_t k = 0; k < replica.size(); ++k) {
                    devices.push_back(replica.element(k).string().value_or(""));
                }
            }
            dp.replicas.push_back(std::move(devices));
        }
    }
    return dp;
}

ExpertParallel parse_expert_parallel(const JsonValue& v) {
    ExpertParallel ep;
    const JsonObject r(v);
    if (!r.ok()) {
        return ep;
    }
    r.reject_unknown({"size"});
    ep.size = static_cast<int>(r.integer("size", kRequired, 1, kMaxExpertParallel).value_or(1));
    return ep;
}

ContextParallel parse_context_parallel(const JsonValue& v) {
    ContextParallel cp;
    const JsonObject r(v);
    if (!r.ok()) {
        return cp;
    }
    r.reject_unknown({"size", "exchange"});
    cp.size = static_cast<int>(r.integer("size", kRequired, 1, kMaxContextParallel).value_or(1));
    if (auto exchange = r.one_of<ContextExchange>(
            "exchange", kOptional,
            {{"ring", ContextExchange::ring}, {"all_gather", ContextExchange::all_gather}})) {
        cp.exchange = *exchange;
    }
    return cp;
}

TensorParallel parse_tensor_parallel(const JsonValue& v) {
    TensorParallel tp;
    const JsonObject r(v);
    if (!r.ok()) {
        return tp;
    }
    r.reject_unknown({"size", "sequence_parallel"});
    tp.size = static_cast<int>(r.integer("size", kRequired, 1, kMaxTensorParallel).value_or(1));
    tp.sequence_parallel = r.boolean("sequence_parallel", kOptional).value_or(false);
    return tp;
}

}  // namespace

void parse_parallelism(const JsonObject& r, Project& p) {
    if (auto tensor_parallel = r.field("tensor_parallel", kOptional)) {
        p.tensor_parallel = parse_tensor_parallel(*tensor_parallel);
    }
    if (auto expert_parallel = r.field("expert_parallel", kOptional)) {
        p.expert_parallel = parse_expert_parallel(*expert_parallel);
    }
    if (auto context_parallel = r.field("context_parallel", kOptional)) {
        p.context_parallel = parse_context_parallel(*context_parallel);
    }
    if (auto data_parallel = r.field("data_parallel", kOptional)) {
        p.data_parallel = parse_data_parallel(*data_parallel);
    }
}

void write_parallelism(const Project& p, json& out) {
    if (p.data_parallel != DataParallel{}) {
        const DataParallel& dp = p.data_parallel;
        json data_parallel = {{"size", dp.size},
                              {"zero_stage", dp.zero_stage},
                              {"overlap_gradient_sync", dp.overlap_gradient_sync},
                              {"bucket_MiB", dp.bucket_MiB}};
        if (!dp.replicas.empty()) {
            data_parallel["replicas"] = dp.replicas;
        }
        out["data_parallel"] = std::move(data_parallel);
    }
    if (p.tensor_parallel != TensorParallel{}) {
        out["tensor_parallel"] = {{"size", p.tensor_parallel.size},
                                  {"sequence_parallel", p.tensor_parallel.sequence_parallel}};
    }
    if (p.expert_parallel != ExpertParallel{}) {
        out["expert_parallel"] = {{"size", p.expert_parallel.size}};
    }
    if (p.context_parallel != ContextParallel{}) {
        out["context_parallel"] = {{"size", p.context_parallel.size},
                                   {"exchange", to_string(p.context_parallel.exchange)}};
    }
}

}  // namespace pipewright
