#include "torchscript/torchscript_chain.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include "pipewright/backend/backend_error.h"

namespace pipewright::backend {
namespace {

using torch::jit::Node;
using torch::jit::Value;
namespace prim = c10::prim;
namespace attr = c10::attr;

// The line of TorchScript a node came from, when the file kept its code.
std::string source_of(const Node* n) {
    const auto& range = n->sourceRange();
    if (!range.source()) {
        return {};
    }
    std::string text = range.text().str();
    text = text.substr(0, text.find('\n'));
    if (text.size() > 80) {
        text = text.substr(0, 77) + "...";
    }
    return text.empty() ? std::string() : " (`" + text + "`)";
}

std::string describe(const Node* n) {
    return std::string(n->kind().toQualString()) + source_of(n);
}

bool is_self_call(const Node* n, const Value* self) {
    return n->kind() == prim::CallMethod && n->inputs().size() > 0 && n->input(0) == self;
}

// Calls of the module's own methods (forward -> _forward_impl) and of
// TorchScript functions are inlined; calls of children stay, since they
// are the layers.
void inline_own_calls(torch::jit::Graph& g, const torch::jit::Module& module) {
    Value* self = g.inputs().at(0);
    for (bool again = true; again;) {
        again = false;
        for (Node* n : g.nodes()) {
            if (is_self_call(n, self)) {
                auto method = module.get_method(n->s(attr::name));
                // The graph as written: the optimised one has the children inlined too.
                torch::jit::inlineCallTo(n, &torch::jit::toGraphFunction(method.function()),
                                         /*inline_optimized_graph=*/false);
                again = true;
                break;
            }
            if (n->kind() == prim::CallFunction) {
                auto type = n->input(0)->type()->cast<c10::FunctionType>();
                auto* fn = type ? torch::jit::tryToGraphFunction(*type->function()) : nullptr;
                if (fn != nullptr) {
                    torch::jit::inlineCallTo(n, fn, /*inline_optimized_graph=*/false);
                    again = true;
                    break;
                }
            }
        }
    }
}

const std::set<c10::Symbol>& bookkeeping_ops() {
    static const std::set<c10::Symbol> ops = {
        prim::Constant,         prim::ListConstruct, prim::TupleConstruct, prim::ListUnpack,
        prim::TupleUnpack,      prim::NumToTensor,   c10::aten::size,      c10::aten::Int,
        prim::device,           prim::dtype,         c10::aten::dim,       prim::RaiseException,
        c10::aten::__getitem__, prim::GetAttr};
    return ops;
}

// Walks one forward graph; see the header for what is accepted.
class ChainWalker {
  public:
    ChainWalker(const torch::jit::Module& module, std::string path)
        : module_(module), path_(std::move(path)) {}

    std::variant<std::vector<ChainStep>, ChainRefusal> run() {
        auto graph = module_.get_method("forward").graph()->copy();
        inline_own_calls(*graph, module_);
        self_ = graph->inputs().at(0);
        const auto inputs = graph->inputs().size() - 1;
        if (inputs != 1) {
            return ChainRefusal{"its forward takes " + std::to_string(inputs) +
                                " inputs; a pipeline stage passes one tensor to the next"};
        }
        current_ = graph->inputs().at(1);
        if (!current_->type()->isSubtypeOf(*c10::TensorType::get())) {
            return ChainRefusal{"its forward takes a " + current_->type()->repr_str() +
                                ", not a tensor"};
        }
        fresh_.insert(current_);
        for (Node* n : graph->nodes()) {
            if (auto why = visit(n)) {
                return ChainRefusal{*why};
            }
        }
        if (steps_.empty()) {
            return ChainRefusal{"its forward calls none of its children"};
        }
        if (graph->outputs().size() != 1 || !fresh_.contains(graph->outputs()[0]) ||
            !graph->outputs()[0]->type()->isSubtypeOf(*c10::TensorType::get())) {
            return ChainRefusal{
                "its forward does not return one tensor computed from its last "
                "child's output"};
        }
        if (auto glue = close_glue(graph->outputs()[0])) {
            steps_.back().after.push_back(std::move(*glue));
        }
        return std::move(steps_);
    }

  private:
    std::optional<std::string> visit(Node* n) {
        const auto kind = n->kind();
        if (kind == prim::Constant) {
            return std::nullopt;
        }
        if (kind == prim::GetAttr && n->input(0) == self_) {
            const std::string name = n->s(attr::name);
            const auto value = module_.attr(name);
            if (value.isModule()) {
                children_[n->output()] = name;
                return std::nullopt;
            }
            if (value.isTensor()) {
                return "its forward uses its own parameter or buffer `" + name +
                       "` between its children; move it into a child module";
            }
            return std::nullopt;  // a setting (an int, a flag): a constant of the glue
        }
        if (kind == prim::CallMethod && children_.contains(n->input(0))) {
            return call(n);
        }
        if (n->blocks().size() > 0) {
            return "its forward has control flow (" + describe(n) +
                   ") between its children; only straight-line code can be split";
        }
        for (Value* in : n->inputs()) {
            if (auto why = usable(in, n)) {
                return why;
            }
        }
        for (Value* out : n->outputs()) {
            fresh_.insert(out);
        }
        pending_.push_back(n);
        return std::nullopt;
    }

    // Whether glue may read v: a constant, a setting, or what was computed
    // since the last child.
    std::optional<std::string> usable(Value* v, const Node* user) {
        if (fresh_.contains(v)) {
            return std::nullopt;
        }
        const Node* p = v->node();
        if (p->kind() == prim::Constant) {
            return std::nullopt;
        }
        if (p->kind() == prim::GetAttr && p->input(0) == self_ && !children_.contains(v)) {
            return std::nullopt;
        }
        if (children_.contains(v)) {
            return "its forward uses its child `" + children_.at(v) + "` other than by calling " +
                   "it (" + describe(user) + ")";
        }
        if (v == self_) {
            return "its forward passes the module itself to " + describe(user);
        }
        return "its forward uses a value from before `" + last_child_ + "` after it (" +
               describe(user) +
               "): a skip connection or a second path around that child cannot be cut";
    }

    std::optional<std::string> call(Node* n) {
        const std::string child = children_.at(n->input(0));
        if (n->s(attr::name) != "forward") {
            return "its forward calls `" + child + "." + n->s(attr::name) +
                   "`; only children's forward calls can be split";
        }
        if (n->inputs().size() != 2) {
            return "its forward calls `" + child + "` with " +
                   std::to_string(n->inputs().size() - 1) +
                   " arguments; a stage passes one tensor to the next";
        }
        if (called_.contains(child)) {
            return "its forward calls `" + child +
                   "` twice; a child used twice shares its weights between stages";
        }
        Value* arg = n->input(1);
        if (auto why = usable(arg, n)) {
            return why;
        }
        if (!arg->type()->isSubtypeOf(*c10::TensorType::get())) {
            return "its forward passes a " + arg->type()->repr_str() + " to `" + child + "`";
        }
        if (n->outputs().size() != 1 ||
            !n->output()->type()->isSubtypeOf(*c10::TensorType::get())) {
            return "`" + child + "` returns " + n->output()->type()->repr_str() +
                   ", not one tensor";
        }
        ChainStep step;
        step.path = path_.empty() ? child : path_ + "." + child;
        step.module_type = module_type_name(module_.attr(child).toModule());
        if (auto glue = close_glue(arg)) {
            // Glue ahead of the first child runs with it; later glue, with
            // the child before it.
            (steps_.empty() ? step.before : steps_.back().after).push_back(std::move(*glue));
        }
        called_.insert(child);
        steps_.push_back(std::move(step));
        last_child_ = child;
        current_ = n->output();
        fresh_ = {current_};
        return std::nullopt;
    }

    // The glue from current_ to `out`, if any.
    std::optional<Glue> close_glue(Value* out) {
        std::optional<Glue> glue;
        if (out != current_) {
            glue = build(out);
        }
        pending_.clear();
        return glue;
    }

    Glue build(Value* out) {
        Glue glue;
        glue.graph = std::make_shared<torch::jit::Graph>();
        auto& g = *glue.graph;
        std::unordered_map<Value*, Value*> map;
        map[current_] = g.addInput()->setType(current_->type());
        std::function<Value*(Value*)> lookup = [&](Value* v) -> Value* {
            if (auto it = map.find(v); it != map.end()) {
                return it->second;
            }
            Node* p = v->node();
            Value* copy = nullptr;
            if (p->kind() == prim::Constant) {
                Node* c = g.createClone(p, lookup);
                g.appendNode(c);
                copy = c->output();
            } else {  // a setting of the module (checked by usable())
                copy = g.insertConstant(module_.attr(p->s(attr::name)));
            }
            map[v] = copy;
            return copy;
        };
        for (Node* n : pending_) {
            Node* c = g.createClone(n, lookup);
            g.appendNode(c);
            for (std::size_t i = 0; i < n->outputs().size(); ++i) {
                map[n->outputs()[i]] = c->outputs()[i];
            }
            if (!bookkeeping_ops().contains(n->kind())) {
                glue.ops.emplace_back(n->kind().toUnqualString());
            }
        }
        g.registerOutput(lookup(out));
        glue.code = std::make_shared<torch::jit::Code>(glue.graph, "glue");
        return glue;
    }

    const torch::jit::Module& module_;
    std::string path_;
    Value* self_ = nullptr;
    Value* current_ = nullptr;
    std::set<Value*> fresh_;
    std::map<Value*, std::string> children_;
    std::set<std::string> called_;
    std::vector<Node*> pending_;
    std::vector<ChainStep> steps_;
    std::string last_child_;
};

}  // namespace

std::vector<std::string> ChainStep::glue_ops() const {
    std::vector<std::string> out;
    for (const auto* list : {&before, &after}) {
        for (const Glue& g : *list) {
            out.insert(out.end(), g.ops.begin(), g.ops.end());
        }
    }
    return out;
}

std::variant<std::vector<ChainStep>, ChainRefusal> forward_chain(const torch::jit::Module& module,
                                                                 const std::string& path) {
    if (!module.find_method("forward")) {
        return ChainRefusal{"it has no forward method"};
    }
    try {
        return ChainWalker(module, path).run();
    } catch (const c10::Error& e) {
        return ChainRefusal{std::string("its forward could not be read: ") +
                            e.what_without_backtrace()};
    }
}

std::string module_type_name(const torch::jit::Module& module) {
    const auto name = module.type()->name();
    return name ? name->name() : std::string("Module");
}

torch::jit::Module submodule_at(const torch::jit::Module& root, const std::string& path) {
    torch::jit::Module m = root;
    std::string walked;
    std::istringstream parts(path);
    for (std::string part; !path.empty() && std::getline(parts, part, '.');) {
        if (!m.hasattr(part) || !m.attr(part).isModule()) {
            throw BackendError(
                "the module has no submodule \"" + path + "\" (" +
                (walked.empty() ? std::string("the top module") : "\"" + walked + "\"") +
                " has no child \"" + part + "\")");
        }
        m = m.attr(part).toModule();
        walked += (walked.empty() ? "" : ".") + part;
    }
    return m;
}

torch::Tensor run_glue(const std::vector<Glue>& glue, torch::Tensor x) {
    for (const Glue& g : glue) {
        torch::jit::InterpreterState state(*g.code);
        torch::jit::Stack stack{std::move(x)};
        state.run(stack);
        x = stack.at(0).toTensor();
    }
    return x;
}

}  // namespace pipewright::backend
