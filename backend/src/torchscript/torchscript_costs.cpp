#include "torchscript/torchscript_costs.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>

#include <ATen/record_function.h>
#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

// Torch 2.3 made Allocator::allocate non-const and added copy_data.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define PIPEWRIGHT_ALLOCATE_QUALIFIER
#define PIPEWRIGHT_ALLOCATOR_COPIES 1
#else
#define PIPEWRIGHT_ALLOCATE_QUALIFIER const
#define PIPEWRIGHT_ALLOCATOR_COPIES 0
#endif

namespace pipewright::backend {
namespace {

// ---- bytes kept for backward -------------------------------------------------

// Wraps the CPU allocator to count the bytes alive; what forward leaves
// alive, besides its output, is what autograd saved for backward. Torch's
// CPU kernels expect a CPU DataPtr's context to be its data, so the inner
// allocations are kept in a table by address.
class CountingAllocator final : public c10::Allocator {
  public:
    explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

    c10::DataPtr allocate(std::size_t bytes) PIPEWRIGHT_ALLOCATE_QUALIFIER override {
        c10::DataPtr inner = inner_->allocate(bytes);
        void* data = inner.get();
        const c10::Device device = inner.device();
        if (data == nullptr) {
            return inner;  // zero bytes
        }
        {
            const std::lock_guard lock(mutex_);
            held_.emplace(data, Held{std::move(inner), bytes});
        }
        live_ += static_cast<std::int64_t>(bytes);
        return {data, data, &release, device};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &release; }

#if PIPEWRIGHT_ALLOCATOR_COPIES
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        std::memcpy(dest, src, count);
    }
#endif

    [[nodiscard]] static std::int64_t live() {
        return live_.load();
    }

  private:
    struct Held {
        c10::DataPtr inner;
        std::size_t bytes;
    };
    static void release(void* data) {
        c10::DataPtr inner;  // freed outside the lock
        {
            const std::lock_guard lock(mutex_);
            auto it = held_.find(data);
            if (it == held_.end()) {
                return;
            }
            live_ -= static_cast<std::int64_t>(it->second.bytes);
            inner = std::move(it->second.inner);
            held_.erase(it);
        }
    }

    c10::Allocator* inner_;
    static inline std::atomic<std::int64_t> live_{0};
    static inline std::mutex mutex_;
    static inline std::unordered_map<void*, Held> held_;
};

// Installed once, for the rest of the process (only `import` measures).
void count_cpu_allocations() {
    static CountingAllocator* counting = [] {
        auto* a = new CountingAllocator(c10::GetCPUAllocator());
        c10::SetCPUAllocator(a, /*priority=*/100);
        return a;
    }();
    (void)counting;
}

// ---- FLOPs ------------------------------------------------------------------

struct FlopTally {
    double forward = 0, input_grad = 0, weight_grad = 0, weight_stash = 0;
    int depth = 0;          // nesting of the operator being dispatched
    int counted_depth = 0;  // > 0 inside an operator already counted
};
thread_local FlopTally* tally = nullptr;

double numel_of(const c10::IValue& v) {
    return v.isTensor() ? static_cast<double>(v.toTensor().numel()) : 0;
}

bool is_weight(const c10::IValue& v) {
    if (!v.isTensor()) {
        return false;
    }
    const auto& t = v.toTensor();
    return t.defined() && t.requires_grad() && t.is_leaf();
}

// Operations that only re-label memory or read metadata: no work.
bool free_op(std::string_view name) {
    static const std::set<std::string_view> names = {
        "aten::view",       "aten::reshape",
        "aten::flatten",    "aten::size",
        "aten::t",          "aten::transpose",
        "aten::permute",    "aten::unsqueeze",
        "aten::squeeze",    "aten::expand",
        "aten::select",     "aten::slice",
        "aten::detach",     "aten::_unsafe_view",
        "aten::as_strided", "aten::to",
        "aten::empty",      "aten::contiguous",
        "aten::alias",      "aten::chunk",
        "aten::split",      "aten::numpy_T",
        "aten::dim",        "aten::Int",
        "aten::ones",       "aten::zeros",
        "aten::arange",     "aten::empty_strided",
        "aten::item",       "aten::_local_scalar_dense",
        "aten::lift_fresh"};
    return names.contains(name);
}

// A matrix product or convolution: 2 FLOPs per multiply-add. Returns false
// for other operations.
bool count_product(std::string_view name, c10::ArrayRef<const c10::IValue> in, FlopTally& t) {
    auto dims = [&](std::size_t i) {
        return in.size() > i && in[i].isTensor() ? in[i].toTensor().sizes().vec()
                                                 : std::vector<std::int64_t>{};
    };
    double flops = 0;
    bool weighted = false;
    double activation = 0;  // elements of the input that W needs
    if (name == "aten::linear") {
        const auto w = dims(1);
        if (w.size() != 2) {
            return false;
        }
        flops = 2 * numel_of(in[0]) * static_cast<double>(w[0]);
        weighted = is_weight(in[1]);
        activation = numel_of(in[0]);
    } else if (name == "aten::convolution" || name == "aten::_convolution" ||
               name == "aten::conv2d" || name == "aten::conv1d" || name == "aten::conv3d") {
        // Output elements x (input channels per group x kernel) from the
        // weight [out, in/groups, k...]; every convolution operator takes
        // stride, padding and dilation as its arguments 3, 4 and 5.
        const auto x = dims(0);
        const auto w = dims(1);
        if (x.size() < 3 || w.size() != x.size()) {
            return false;
        }
        double kernel = 1;
        for (std::size_t i = 1; i < w.size(); ++i) {
            kernel *= static_cast<double>(w[i]);
        }
        auto ints = [&](std::size_t i) {
            return in.size() > i && in[i].isIntList() ? in[i].toIntVector()
                                                      : std::vector<std::int64_t>{};
        };
        const auto stride = ints(3);
        const auto padding = ints(4);  // empty for padding="same": then out = in / stride
        const auto dilation = ints(5);
        auto at = [](const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
            return v.empty() ? fallback : v[std::min(i, v.size() - 1)];
        };
        double out_pixels = 1;
        for (std::size_t i = 2; i < x.size(); ++i) {
            const auto s = std::max<std::int64_t>(1, at(stride, i - 2, 1));
            std::int64_t out = (x[i] + s - 1) / s;
            if (!padding.empty()) {
                const auto span =
                    x[i] + 2 * at(padding, i - 2, 0) - at(dilation, i - 2, 1) * (w[i] - 1) - 1;
                out = span < 0 ? 0 : span / s + 1;
            }
            out_pixels *= static_cast<double>(out);
        }
        flops = 2 * static_cast<double>(x[0]) * static_cast<double>(w[0]) * out_pixels * kernel;
        weighted = is_weight(in[1]);
        activation = numel_of(in[0]);
    } else if (name == "aten::addmm" || name == "aten::mm" || name == "aten::bmm" ||
               name == "aten::baddbmm" || name == "aten::matmul") {
        const std::size_t a = name == "aten::addmm" || name == "aten::baddbmm" ? 1 : 0;
        const auto x = dims(a);
        const auto y = dims(a + 1);
        if (x.empty() || y.empty()) {
            return false;
        }
        const double n = y.size() >= 2 ? static_cast<double>(y.back()) : 1;
        flops = 2 * numel_of(in[a]) * n;
        weighted = is_weight(in[a + 1]) || is_weight(in[a]);
        activation = numel_of(in[is_weight(in[a]) ? a + 1 : a]);
    } else {
        return false;
    }
    t.forward += flops;
    if (weighted) {
        t.input_grad += flops;
        t.weight_grad += flops;
        t.weight_stash += activation;
    } else {
        t.input_grad += 2 * flops;  // both operands are activations
    }
    return true;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    FlopTally& t = *tally;
    ++t.depth;
    if (t.counted_depth > 0) {
        ++t.counted_depth;
        return nullptr;
    }
    const std::string_view name = fn.name();
    if (count_product(name, fn.inputs(), t)) {
        t.counted_depth = 1;
        return nullptr;
    }
    if (t.depth == 1 && !free_op(name) && name.starts_with("aten::")) {
        // Element-wise or reduction work: one operation per input element,
        // each way (the catalog's convention for memory-bound layers).
        double n = 0;
        for (const auto& v : fn.inputs()) {
            n = std::max(n, numel_of(v));
        }
        t.forward += n;
        t.input_grad += n;
    }
    return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) {
    FlopTally& t = *tally;
    --t.depth;
    if (t.counted_depth > 0) {
        --t.counted_depth;
    }
}

}  // namespace

MeasuredCosts measure_costs(const std::function<torch::Tensor(torch::Tensor)>& forward,
                            const torch::Tensor& input, std::int64_t samples,
                            torch::Tensor& output) {
    count_cpu_allocations();
    // The input as a stage hands it to a layer in its middle: computed
    // from a leaf that needs its gradient (held here, so it is not counted).
    const bool floating = input.is_floating_point();
    auto leaf = input.detach().clone();
    if (floating) {
        leaf.requires_grad_(true);
    }
    auto example = [&] { return floating ? leaf.clone() : leaf; };
    {
        // Warm-up: TorchScript's executor profiles and optimises its first
        // runs; what it allocates for itself is not the layer's.
        (void)forward(example());
        (void)forward(example());
    }
    FlopTally t;
    MeasuredCosts c;
    auto x = example();
    const auto input_bytes = floating ? static_cast<std::int64_t>(x.storage().nbytes()) : 0;
    const std::int64_t before = CountingAllocator::live();
    {
        tally = &t;
        const auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end)
                                                           .needsInputs(true)
                                                           .scopes({at::RecordScope::FUNCTION}));
        try {
            // The input is handed over: if autograd keeps it, it stays alive
            // and is counted; if not, it is freed.
            output = forward(std::move(x));
        } catch (...) {
            at::removeCallback(handle);
            tally = nullptr;
            throw;
        }
        at::removeCallback(handle);
        tally = nullptr;
    }
    const std::int64_t kept = CountingAllocator::live() - (before - input_bytes) -
                              static_cast<std::int64_t>(output.storage().nbytes());
    const auto n = static_cast<double>(samples);
    const double element = static_cast<double>(output.element_size());
    c.forward_flops = t.forward / n;
    c.backward_input_flops = t.input_grad / n;
    c.backward_weight_flops = t.weight_grad / n;
    c.stashed_elements = std::max<double>(0, static_cast<double>(kept)) / element / n;
    c.weight_stashed_elements = std::min(c.stashed_elements, t.weight_stash / n);
    output = output.detach();
    return c;
}

}  // namespace pipewright::backend
