#include "layers/mixture_of_experts.h"

#include <cmath>
#include <numeric>

#include "layers/decoder_parts.h"
#include "pipewright/backend/backend_error.h"

namespace pipewright::backend {
namespace {

// Uniform in ±1/√fan_in, as torch::nn::Linear initialises its weight and
// bias, so that an expert starts like the dense MLP it replaces.
torch::Tensor linear_init(std::vector<std::int64_t> shape, std::int64_t fan_in) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    return torch::empty(shape).uniform_(-bound, bound);
}

// Rows of `x` exchanged with every member of `group`: the first send[0] rows
// to member 0, the next send[1] to member 1, ...; the result holds
// receive[i] rows from member i, in member order.
torch::Tensor exchange_rows(const torch::Tensor& x, CollectiveGroup& group,
                            std::vector<std::int64_t> send, std::vector<std::int64_t> receive) {
    torch::Tensor input = x.contiguous();
    std::vector<std::int64_t> shape = x.sizes().vec();
    shape[0] = std::accumulate(receive.begin(), receive.end(), std::int64_t{0});
    torch::Tensor output = torch::empty(shape, x.options());
    group.alltoall_base(output, input, receive, send)->wait();
    return output;
}

// The dispatch (and the combine) all-to-all: forward, rows to their
// experts' members; backward, their gradients back the way they came.
struct ExchangeRows : torch::autograd::Function<ExchangeRows> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                                 CollectiveGroup* group, std::vector<std::int64_t> send,
                                 std::vector<std::int64_t> receive) {
        // The group outlives every graph built while the stage runs.
        ctx->saved_data["group"] = reinterpret_cast<std::int64_t>(group);
        ctx->saved_data["send"] = send;
        ctx->saved_data["receive"] = receive;
        return exchange_rows(x, *group, std::move(send), std::move(receive));
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        auto* group = reinterpret_cast<CollectiveGroup*>(ctx->saved_data["group"].toInt());
        return {exchange_rows(grads[0], *group, ctx->saved_data["receive"].toIntVector(),
                              ctx->saved_data["send"].toIntVector()),
                torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
};

// One expert's MLP: the block's activation between two projections.
torch::Tensor expert_mlp(const torch::Tensor& x, const torch::Tensor& w1, const torch::Tensor& b1,
                         const torch::Tensor& w2, const torch::Tensor& b2, MlpActivation act) {
    return torch::linear(mlp_activation(torch::linear(x, w1, b1), act), w2, b2);
}

// Element `i` of a stacked bias, or none.
torch::Tensor row(const torch::Tensor& stacked, std::int64_t i) {
    return stacked.defined() ? stacked[i] : torch::Tensor();
}

std::vector<std::int64_t> to_vector(const torch::Tensor& counts) {
    const torch::Tensor host = counts.to(torch::kCPU, torch::kInt64).contiguous();
    return {host.data_ptr<std::int64_t>(), host.data_ptr<std::int64_t>() + host.numel()};
}

}  // namespace

MixtureOfExpertsImpl::MixtureOfExpertsImpl(const TransformerDims& d)
    : experts_(static_cast<std::int64_t>(d.experts)),
      top_k_(static_cast<std::int64_t>(d.top_k)),
      shared_(static_cast<std::int64_t>(d.shared_experts)),
      activation_(d.activation) {
    const auto h = static_cast<std::int64_t>(d.hidden);
    const auto in = static_cast<std::int64_t>(d.expert_in_width());
    const auto ffn = static_cast<std::int64_t>(d.expert_ffn);
    router = register_module("router",
                             torch::nn::Linear(torch::nn::LinearOptions(h, experts_).bias(false)));
    const auto stack = [&](const std::string& prefix, std::int64_t n, torch::Tensor& w1,
                           torch::Tensor& b1, torch::Tensor& w2, torch::Tensor& b2) {
        if (n == 0) {
            return;
        }
        w1 = register_parameter(prefix + "fc1_weight", linear_init({n, in, h}, h));
        if (d.bias) {
            b1 = register_parameter(prefix + "fc1_bias", linear_init({n, in}, h));
        }
        w2 = register_parameter(prefix + "fc2_weight", linear_init({n, h, ffn}, ffn));
        if (d.bias) {
            b2 = register_parameter(prefix + "fc2_bias", linear_init({n, h}, ffn));
        }
    };
    stack("experts_", experts_, fc1_weight, fc1_bias, fc2_weight, fc2_bias);
    stack("shared_", shared_, shared_fc1_weight, shared_fc1_bias, shared_fc2_weight,
          shared_fc2_bias);
}

void MixtureOfExpertsImpl::keep_local_experts(const ExpertGroup& group) {
    if (group.size <= 1) {
        return;
    }
    if (experts_ % group.size != 0 || !group.group) {
        throw BackendError("cannot split " + std::to_string(experts_) + " experts over " +
                           std::to_string(group.size) + " ranks");
    }
    group_ = group;
    const std::int64_t local = experts_ / group.size;
    const torch::NoGradGuard no_grad;
    for (torch::Tensor* t : {&fc1_weight, &fc1_bias, &fc2_weight, &fc2_bias}) {
        if (t->defined()) {
            t->set_data(t->narrow(0, first_local_expert(), local).clone());
        }
    }
}

std::int64_t MixtureOfExpertsImpl::first_local_expert() const {
    return experts_ / group_.size * group_.rank;
}

torch::Tensor MixtureOfExpertsImpl::run_local_experts(
    const torch::Tensor& rows, const std::vector<std::int64_t>& counts) const {
    std::vector<torch::Tensor> outputs;
    std::int64_t at = 0;
    for (std::size_t j = 0; j < counts.size(); ++j) {
        const std::int64_t n = counts[j];
        if (n == 0) {
            continue;
        }
        const auto e = static_cast<std::int64_t>(j);
        outputs.push_back(expert_mlp(rows.narrow(0, at, n), fc1_weight[e], row(fc1_bias, e),
                                     fc2_weight[e], row(fc2_bias, e), activation_));
        at += n;
    }
    // No rows at all: still an output in the graph of `rows`, so that the
    // combine's all-to-all runs backward here as on every other member.
    return outputs.empty() ? rows.narrow(0, 0, 0) : torch::cat(outputs);
}

torch::Tensor MixtureOfExpertsImpl::through_experts(const torch::Tensor& rows,
                                                    const torch::Tensor& per_expert) const {
    if (group_.size <= 1) {
        return run_local_experts(rows, to_vector(per_expert));
    }
    const int members = group_.size;
    const std::int64_t local = experts_ / members;
    // How many rows each member sends each of this member's experts.
    torch::Tensor incoming = torch::empty_like(per_expert);
    {
        torch::Tensor outgoing = per_expert.contiguous();
        std::vector<std::int64_t> equal;
        group_.group->alltoall_base(incoming, outgoing, equal, equal)->wait();
    }
    const std::vector<std::int64_t> sent = to_vector(per_expert);
    const std::vector<std::int64_t> arriving = to_vector(incoming);
    std::vector<std::int64_t> send(static_cast<std::size_t>(members), 0);
    std::vector<std::int64_t> receive(static_cast<std::size_t>(members), 0);
    for (std::size_t i = 0; i < sent.size(); ++i) {
        send[i / static_cast<std::size_t>(local)] += sent[i];
        receive[i / static_cast<std::size_t>(local)] += arriving[i];
    }
    const torch::Tensor arrived = ExchangeRows::apply(rows, group_.group.get(), send, receive);

    // The arrived rows come by member, each member's by expert; the experts
    // want them by expert.
    std::vector<std::int64_t> starts(arriving.size());
    std::exclusive_scan(arriving.begin(), arriving.end(), starts.begin(), std::int64_t{0});
    std::vector<std::int64_t> by_expert;
    std::vector<std::int64_t> counts(static_cast<std::size_t>(local), 0);
    by_expert.reserve(static_cast<std::size_t>(arrived.size(0)));
    for (std::int64_t j = 0; j < local; ++j) {
        for (int m = 0; m < members; ++m) {
            const auto block = static_cast<std::size_t>(m * local + j);
            for (std::int64_t r = 0; r < arriving[block]; ++r) {
                by_expert.push_back(starts[block] + r);
            }
            counts[static_cast<std::size_t>(j)] += arriving[block];
        }
    }
    std::vector<std::int64_t> back(by_expert.size());
    for (std::size_t i = 0; i < by_expert.size(); ++i) {
        back[static_cast<std::size_t>(by_expert[i])] = static_cast<std::int64_t>(i);
    }
    const auto index = [&](const std::vector<std::int64_t>& v) {
        return torch::tensor(v, torch::kInt64).to(rows.device());
    };
    const torch::Tensor done = run_local_experts(arrived.index_select(0, index(by_expert)), counts);
    return ExchangeRows::apply(done.index_select(0, index(back)), group_.group.get(), receive,
                               send);
}

torch::Tensor MixtureOfExpertsImpl::forward(const torch::Tensor& x) {
    const std::int64_t h = x.size(-1);
    const torch::Tensor tokens = x.reshape({-1, h});
    const torch::Tensor probabilities = torch::softmax(router(tokens), -1);
    // A stable sort: equal probabilities go to the lower expert index, so
    // that every process routes a token alike.
    const auto [sorted, ranked] =
        probabilities.sort(c10::optional<bool>(true), -1, /*descending=*/true);
    torch::Tensor weights = sorted.narrow(-1, 0, top_k_);
    const torch::Tensor chosen = ranked.narrow(-1, 0, top_k_).reshape({-1});
    if (top_k_ > 1) {
        // Mixtral and Qwen3 renormalise the chosen experts' weights; with
        // one expert that would leave the router without a gradient.
        weights = weights / weights.sum(-1, true);
    }
    // Every (token, choice) pair, by expert, tokens in order within one.
    const torch::Tensor by_expert = std::get<1>(chosen.sort(c10::optional<bool>(true), 0));
    const torch::Tensor token_of = torch::div(by_expert, top_k_, "floor");
    const torch::Tensor per_expert = torch::bincount(chosen, {}, experts_);
    const torch::Tensor results = through_experts(tokens.index_select(0, token_of), per_expert);
    const torch::Tensor weighted =
        results * weights.reshape({-1}).index_select(0, by_expert).unsqueeze(-1);
    torch::Tensor out = torch::zeros_like(tokens).index_add(0, token_of, weighted);
    for (std::int64_t s = 0; s < shared_; ++s) {
        out = out + expert_mlp(tokens, shared_fc1_weight[s], row(shared_fc1_bias, s),
                               shared_fc2_weight[s], row(shared_fc2_bias, s), activation_);
    }
    return out.reshape(x.sizes());
}

bool is_routed_expert_parameter(const std::string& name) {
    const auto dot = name.rfind('.');
    return name.compare(dot == std::string::npos ? 0 : dot + 1, 8, "experts_") == 0;
}

}  // namespace pipewright::backend
