#include "import_command.h"

#include "config_project.h"
#include "option_checks.h"

namespace pipewright::cli {

void add_import_command(CLI::App& app, ImportArgs& a) {
    CLI::App* cmd = app.add_subcommand(
        "import",
        "Make a project of a TorchScript module's layers (torch.jit.script or trace), or of the "
        "decoder a Hugging Face config.json describes");
    cmd->add_option("module", a.module,
                    "TorchScript file (.pt), or a Hugging Face config (.json) of a Llama, "
                    "Mistral, Mixtral, Qwen2, Qwen3, Qwen3-MoE, Gemma 2, Gemma 3, gpt-oss, "
                    "Phi-3/4, DeepSeek-V2/V3 or GPT-2 model")
        ->required();
    cmd->add_option("--input-shape", a.input_shape,
                    "Shape of one sample, without the batch, e.g. 3,224,224 (required for a "
                    "TorchScript file)");
    cmd->add_option("--seq-len", a.seq_len,
                    "Tokens per sequence for a config (default: its max_position_embeddings, "
                    "at most 4096)")
        ->check(whole_number(1, kMaxImportSequence));
    cmd->add_option("--input-dtype", a.input_dtype,
                    "float32 (default) or int64 (token ids, for a model that starts with an "
                    "embedding)")
        ->check(CLI::IsMember({"float32", "int64"}));
    cmd->add_option("--loss", a.loss,
                    "cross_entropy (default: logits over the last dimension) "
                    "or mse")
        ->check(CLI::IsMember({"cross_entropy", "mse"}));
    cmd->add_option("--depth", a.depth,
                    "Levels to split below the module's children: children whose forward is "
                    "a chain of their own children are split into those (default 0)")
        ->check(whole_number(0, 64));
    cmd->add_option("--devices", a.devices,
                    "Devices (per node) to place the layers on, balanced by their work "
                    "(default 1)")
        ->check(whole_number(1, kMaxImportDevices));
    cmd->add_option("--nodes", a.nodes, "Nodes of --devices each, for a config (default 1)")
        ->check(whole_number(1, kMaxImportDevices));
    cmd->add_option("--device-spec", a.device_spec,
                    "Device catalog entry of those devices: cpu (the default for a module), "
                    "H100-SXM (for a config), or another such as A100-80GB (see `pipewright "
                    "devices`)");
    cmd->add_option("--batch-size,-b", a.batch_size, "Samples per iteration (default 32)")
        ->check(whole_number(1));
    cmd->add_option("--microbatches,-m", a.microbatches,
                    "Micro-batches per iteration (default: twice the stages, dividing the "
                    "batch)")
        ->check(whole_number(1));
    cmd->add_option("--vocabulary", a.vocabulary,
                    "Token ids are below this (int64 input; default: the first embedding's "
                    "size)")
        ->check(whole_number(1));
    cmd->add_option("--init", a.init,
                    "Weights to train from: file (default: the module's own) or seed (PyTorch's "
                    "default initialisation, drawn from the project's seed)")
        ->check(CLI::IsMember({"file", "seed"}));
    cmd->add_option("--out,-o", a.out,
                    "Project file to write (default: the module's name with .json, beside it)")
        ->check(non_empty_path());
    cmd->add_flag("--json", a.json, "Print the layers found as JSON");
    cmd->add_flag("--dry-run", a.dry_run, "Find and measure the layers; write no file");
    cmd->add_option("--timeout", a.timeout_s,
                    "Seconds measuring one layer may take before the import ends, naming it "
                    "(default 600)")
        ->check(finite_number(0.001, 604800));
}

bool is_hf_config(const ImportArgs& a) {
    const auto dot = a.module.rfind('.');
    return dot != std::string::npos && a.module.substr(dot) == ".json";
}

}  // namespace pipewright::cli
