// `pipewright launch-files`: the Slurm batch script, the Kubeflow PyTorchJob
// and TrainJob and the torchrun command line of a project carry its nodes,
// ranks per node and GPUs; the manifests hold the fields the operators
// document, with the right types; the scripts parse (`bash -n`) and, run
// with stand-ins for srun, scontrol and python3, start `pipewright run` as
// its environment mode expects; bad inputs are refused in words. Where the
// backend and Debian's torchrun are there, the torchrun script and the
// batch script (under a stand-in srun that starts the tasks) train a
// two-stage CPU project for real.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "pipewright/core/launch_files.h"
#include "pipewright/core/project_io.h"

namespace pipewright {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::example;
using testing::run_cli;
using testing::TempDir;

std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    if (in) {
        text << in.rdbuf();
    }
    return text.str();
}

void write(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
}

struct Shell {
    int code = -1;
    std::string output;
};

// `command` through /bin/sh, stdout and stderr together.
Shell shell(const std::string& command, const fs::path& dir) {
    const fs::path out = dir / "shell-output.txt";
    const int status = std::system((command + " > '" + out.string() + "' 2>&1").c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out)};
}

// A project of `nodes` nodes × `per_node` devices of `spec`, one linear
// layer a device of the first `stages` devices, with `replicas` replicas
// laid out by default.
fs::path write_project(const fs::path& path, int nodes, int per_node, const std::string& spec,
                       int stages, int replicas = 1) {
    json p{{"format", "pipewright-project"}, {"version", 1}};
    json layers = json::array();
    for (int i = 0; i < stages; ++i) {
        layers.push_back({{"name", "fc" + std::to_string(i)},
                          {"type", "linear"},
                          {"in_features", 64},
                          {"out_features", 64}});
    }
    p["model"] = {{"name", "chain"},
                  {"input", {{"shape", {64}}, {"dtype", "float32"}}},
                  {"loss", "mse"},
                  {"layers", layers}};
    json node_list = json::array();
    for (int n = 0; n < nodes; ++n) {
        json devices = json::array();
        for (int d = 0; d < per_node; ++d) {
            devices.push_back({{"name", "dev" + std::to_string(d)}, {"spec", spec}});
        }
        node_list.push_back({{"name", "node" + std::to_string(n)},
                             {"containers", {{{"name", "c0"}, {"devices", devices}}}}});
    }
    p["topology"] = {{"nodes", node_list}};
    json placement = json::array();
    for (int i = 0; i < stages; ++i) {
        placement.push_back({{"device", "node" + std::to_string(i / per_node) + "/c0/dev" +
                                            std::to_string(i % per_node)},
                             {"layers", {"fc" + std::to_string(i)}}});
    }
    p["placement"] = placement;
    p["training"] = {{"batch_size", 64 * replicas},
                     {"microbatches", std::max(4, stages)},
                     {"schedule", "1f1b"},
                     {"optimizer", {{"type", "sgd"}, {"lr", 0.01}}},
                     {"steps", 2}};
    if (replicas > 1) {
        p["data_parallel"] = {{"size", replicas}};
    }
    write(path, p.dump(2));
    return path;
}

// The manifests as JSON, read by python3's YAML reader; nullopt (and the
// test skipped by the caller) where python3-yaml is missing.
std::optional<json> yaml_file(const fs::path& path, const fs::path& dir) {
    const auto r = shell(
        "/usr/bin/python3 -c 'import sys, json, yaml; "
        "print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' '" +
            path.string() + "'",
        dir);
    if (r.code != 0) {
        return std::nullopt;
    }
    return json::parse(r.output);
}

bool have_yaml() {
    return std::system("/usr/bin/python3 -c 'import yaml' > /dev/null 2>&1") == 0;
}

// Every key of `object` is one of `known`.
void expect_known_keys(const json& object, const std::set<std::string>& known,
                       const std::string& where) {
    ASSERT_TRUE(object.is_object()) << where << " is not an object: " << object.dump();
    for (const auto& [key, value] : object.items()) {
        EXPECT_TRUE(known.contains(key)) << where << " has an unknown field " << key;
    }
}

bool is_dns_label(const std::string& name, std::size_t longest) {
    return name.size() <= longest &&
           std::regex_match(name, std::regex("[a-z]([-a-z0-9]*[a-z0-9])?"));
}

// The words after `flag` in a command.
std::string after(const std::vector<std::string>& words, const std::string& flag) {
    const auto it = std::find(words.begin(), words.end(), flag);
    return it == words.end() || it + 1 == words.end() ? "" : *(it + 1);
}

struct Expected {
    int nodes = 1;
    int per_node = 1;
    bool gpus = true;
};

// A container of a pod (a core/v1 Container): the fields the files use,
// with their types.
void check_container(const json& c, const Expected& e, const std::string& where) {
    expect_known_keys(c,
                      {"name", "image", "command", "args", "workingDir", "ports", "env",
                       "resources", "volumeMounts"},
                      where);
    ASSERT_TRUE(c.at("image").is_string()) << where;
    ASSERT_TRUE(c.at("command").is_array()) << where;
    for (const auto& word : c.at("command")) {
        ASSERT_TRUE(word.is_string()) << where << ": " << word.dump();
    }
    std::set<std::string> names;
    for (const auto& var : c.at("env")) {
        expect_known_keys(var, {"name", "value", "valueFrom"}, where + ".env[]");
        ASSERT_TRUE(var.at("name").is_string() && var.at("value").is_string()) << var.dump();
        names.insert(var.at("name").get<std::string>());
    }
    EXPECT_TRUE(names.contains("GLOO_SOCKET_IFNAME")) << where;
    EXPECT_EQ(names.contains("NCCL_SOCKET_IFNAME"), e.gpus) << where;
    for (const auto& name : names) {
        EXPECT_NE(name.rfind("PET_", 0), 0U) << name << ": the operators reserve PET_*";
    }
    const json& resources = c.at("resources");
    expect_known_keys(resources, {"limits", "requests"}, where + ".resources");
    if (e.gpus) {
        ASSERT_TRUE(resources.at("limits").at("nvidia.com/gpu").is_number_integer()) << where;
        EXPECT_EQ(resources["limits"]["nvidia.com/gpu"], e.per_node) << where;
    } else {
        EXPECT_FALSE(resources.dump().find("gpu") != std::string::npos) << resources.dump();
        EXPECT_EQ(resources.at("requests").at("cpu"), std::to_string(e.per_node)) << where;
    }
}

std::vector<std::string> words_of(const json& command) {
    return command.get<std::vector<std::string>>();
}

// kubeflow.org/v1 PyTorchJob, as the training operator documents it:
// spec.pytorchReplicaSpecs.{Master,Worker}.{replicas,restartPolicy,template},
// spec.nprocPerNode a string, a container named "pytorch" with the port
// "pytorchjob-port" the operator gives as MASTER_PORT.
void check_pytorchjob(const json& job, const Expected& e) {
    EXPECT_EQ(job.at("apiVersion"), "kubeflow.org/v1");
    EXPECT_EQ(job.at("kind"), "PyTorchJob");
    expect_known_keys(job, {"apiVersion", "kind", "metadata", "spec"}, "PyTorchJob");
    // The operator names the pods and services NAME-worker-N.
    EXPECT_TRUE(is_dns_label(job.at("metadata").at("name").get<std::string>(), 50))
        << job["metadata"].dump();
    const json& spec = job.at("spec");
    expect_known_keys(spec, {"runPolicy", "elasticPolicy", "pytorchReplicaSpecs", "nprocPerNode"},
                      "spec");
    ASSERT_TRUE(spec.at("nprocPerNode").is_string()) << "nprocPerNode is a string field";
    EXPECT_EQ(spec["nprocPerNode"], std::to_string(e.per_node));
    const json& replicas = spec.at("pytorchReplicaSpecs");
    expect_known_keys(replicas, {"Master", "Worker"}, "pytorchReplicaSpecs");
    ASSERT_TRUE(replicas.contains("Master"));
    EXPECT_EQ(replicas["Master"].at("replicas"), 1);
    EXPECT_EQ(replicas.contains("Worker"), e.nodes > 1);
    int pods = 0;
    for (const auto& [type, r] : replicas.items()) {
        expect_known_keys(r, {"replicas", "restartPolicy", "template"}, type);
        ASSERT_TRUE(r.at("replicas").is_number_integer()) << type;
        EXPECT_GE(r["replicas"].get<int>(), 1) << type;
        pods += r["replicas"].get<int>();
        const std::set<std::string> policies{"Always", "OnFailure", "Never", "ExitCode"};
        EXPECT_TRUE(policies.contains(r.at("restartPolicy").get<std::string>())) << type;
        const json& pod = r.at("template").at("spec");
        const json& containers = pod.at("containers");
        ASSERT_EQ(containers.size(), 1U) << type;
        const json& c = containers[0];
        EXPECT_EQ(c.at("name"), "pytorch") << "the operator's default container name";
        check_container(c, e, type);
        ASSERT_EQ(c.at("ports").size(), 1U);
        EXPECT_EQ(c["ports"][0].at("name"), "pytorchjob-port");
        EXPECT_TRUE(c["ports"][0].at("containerPort").is_number_integer());
        const auto words = words_of(c.at("command"));
        ASSERT_GE(words.size(), 3U);
        EXPECT_EQ(words[0], "pipewright");
        EXPECT_EQ(words[1], "run");
        EXPECT_TRUE(fs::path(words[2]).is_absolute()) << words[2];
        EXPECT_EQ(after(words, "--launcher"), "own");
        EXPECT_EQ(after(words, "--nnodes"), std::to_string(e.nodes));
        EXPECT_EQ(after(words, "--nproc-per-node"), std::to_string(e.per_node));
        EXPECT_EQ(after(words, "--node-rank"), "$(RANK)");
        EXPECT_EQ(after(words, "--master-addr"), "$(MASTER_ADDR)");
        EXPECT_EQ(after(words, "--master-port"), "$(MASTER_PORT)");
        EXPECT_EQ(after(words, "--device"), e.gpus ? "cuda" : "cpu");
        // The project's folder is mounted where the command looks for it.
        const auto mount = c.at("volumeMounts").at(0);
        EXPECT_EQ(mount.at("mountPath"), fs::path(words[2]).parent_path().string());
        EXPECT_EQ(pod.at("volumes").at(0).at("name"), mount.at("name"));
    }
    EXPECT_EQ(pods, e.nodes) << "Master and Worker replicas make the nodes";
}

// trainer.kubeflow.org/v1alpha1 TrainJob (Kubeflow Trainer):
// spec.runtimeRef.name, spec.trainer.{image,command,env,numNodes,
// numProcPerNode,resourcesPerNode}; PET_* are the torch plugin's.
void check_trainjob(const json& job, const Expected& e) {
    EXPECT_EQ(job.at("apiVersion"), "trainer.kubeflow.org/v1alpha1");
    EXPECT_EQ(job.at("kind"), "TrainJob");
    expect_known_keys(job, {"apiVersion", "kind", "metadata", "spec"}, "TrainJob");
    EXPECT_TRUE(is_dns_label(job.at("metadata").at("name").get<std::string>(), 63));
    const json& spec = job.at("spec");
    expect_known_keys(
        spec,
        {"runtimeRef", "initializer", "trainer", "runtimePatches", "suspend", "managedBy",
         "activeDeadlineSeconds", "podSpecOverrides", "labels", "annotations"},
        "spec");
    const json& ref = spec.at("runtimeRef");
    expect_known_keys(ref, {"name", "apiGroup", "kind"}, "runtimeRef");
    ASSERT_TRUE(ref.at("name").is_string());
    EXPECT_FALSE(ref["name"].get<std::string>().empty());
    EXPECT_EQ(ref.at("apiGroup"), "trainer.kubeflow.org");
    const json& trainer = spec.at("trainer");
    expect_known_keys(
        trainer,
        {"image", "command", "args", "env", "numNodes", "resourcesPerNode", "numProcPerNode"},
        "trainer");
    ASSERT_TRUE(trainer.at("numNodes").is_number_integer());
    EXPECT_EQ(trainer["numNodes"], e.nodes);
    ASSERT_TRUE(trainer.at("numProcPerNode").is_number_integer());
    EXPECT_EQ(trainer["numProcPerNode"], e.per_node);
    json container = trainer;
    container.erase("numNodes");
    container.erase("numProcPerNode");
    container["resources"] = trainer.at("resourcesPerNode");
    container.erase("resourcesPerNode");
    check_container(container, e, "trainer");
    const auto words = words_of(trainer.at("command"));
    ASSERT_GE(words.size(), 3U);
    EXPECT_EQ(words[0], "pipewright");
    EXPECT_EQ(words[1], "run");
    EXPECT_EQ(after(words, "--launcher"), "own");
    EXPECT_EQ(after(words, "--device"), e.gpus ? "cuda" : "cpu");
    // The node's place comes from the plugin's PET_* variables.
    EXPECT_EQ(after(words, "--nnodes"), "");
}

// The first lines of a file, up to its first line of code, are comments,
// and they name what the file assumes.
void check_comment_block(const std::string& text, const std::string& name, bool gpus) {
    std::istringstream in(text);
    std::string block;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("#SBATCH", 0) == 0 || (!line.empty() && line[0] != '#')) {
            break;
        }
        block += line + '\n';
    }
    EXPECT_NE(block.find("Assumptions:"), std::string::npos) << name << ":\n" << text;
    EXPECT_NE(block.find("shared filesystem"), std::string::npos) << name;
    EXPECT_NE(block.find("port"), std::string::npos) << name;
    // A CPU project says so in each file.
    EXPECT_EQ(block.find(": Gloo, CPU launch files, no GPU is asked for") != std::string::npos,
              !gpus)
        << name << ":\n"
        << block;
}

struct Written {
    fs::path folder;
    std::string slurm, pytorchjob, trainjob, torchrun;
};

Written launch_files(const std::string& project, const fs::path& folder,
                     const std::vector<std::string>& more = {}) {
    std::vector<std::string> args{"launch-files", project, "--out", folder.string()};
    args.insert(args.end(), more.begin(), more.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("Wrote 4 files into " + folder.string()), std::string::npos) << r.out;
    return {folder, read(folder / "slurm.sbatch"), read(folder / "pytorchjob.yaml"),
            read(folder / "trainjob.yaml"), read(folder / "torchrun.sh")};
}

void check_all(const Written& w, const Expected& e, const fs::path& dir) {
    const std::string n = std::to_string(e.nodes);
    const std::string k = std::to_string(e.per_node);
    const std::string world = std::to_string(e.nodes * e.per_node);
    // Slurm: nodes, tasks a node, GPUs a node, the master from the node list.
    EXPECT_NE(w.slurm.find("\n#SBATCH --nodes=" + n + "\n"), std::string::npos) << w.slurm;
    EXPECT_NE(w.slurm.find("\n#SBATCH --ntasks-per-node=" + k + "\n"), std::string::npos);
    EXPECT_EQ(w.slurm.find("--gres=gpu:" + k + "\n") != std::string::npos, e.gpus) << w.slurm;
    EXPECT_EQ(w.slurm.find("gres") != std::string::npos, e.gpus) << w.slurm;
    EXPECT_NE(w.slurm.find("srun --nodes=" + n + " --ntasks=" + world), std::string::npos);
    EXPECT_NE(w.slurm.find("scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1"),
              std::string::npos);
    EXPECT_NE(w.slurm.find("--launcher slurm --device " + std::string(e.gpus ? "cuda" : "cpu")),
              std::string::npos);
    // torchrun: nodes and processes a node, in torch 1.13's spelling.
    EXPECT_NE(w.torchrun.find("-m torch.distributed.run --no_python --nnodes " + n +
                              " --nproc_per_node " + k + " "),
              std::string::npos)
        << w.torchrun;
    EXPECT_NE(w.torchrun.find("--redirects 1 --tee 1"), std::string::npos);
    EXPECT_NE(w.torchrun.find("--launcher torchrun"), std::string::npos);
    for (const auto& [name, text] : {std::pair{"slurm.sbatch", w.slurm},
                                     {"pytorchjob.yaml", w.pytorchjob},
                                     {"trainjob.yaml", w.trainjob},
                                     {"torchrun.sh", w.torchrun}}) {
        check_comment_block(text, name, e.gpus);
    }
    // The scripts parse, and are executable.
    for (const char* script : {"slurm.sbatch", "torchrun.sh"}) {
        const auto r = shell("bash -n '" + (w.folder / script).string() + "'", dir);
        EXPECT_EQ(r.code, 0) << script << ": " << r.output;
        EXPECT_EQ(::access((w.folder / script).c_str(), X_OK), 0) << script;
    }
    if (!have_yaml()) {
        GTEST_SKIP() << "python3-yaml is missing: the manifests were not read back";
    }
    const auto pytorchjob = yaml_file(w.folder / "pytorchjob.yaml", dir);
    ASSERT_TRUE(pytorchjob) << w.pytorchjob;
    check_pytorchjob(*pytorchjob, e);
    const auto trainjob = yaml_file(w.folder / "trainjob.yaml", dir);
    ASSERT_TRUE(trainjob) << w.trainjob;
    check_trainjob(*trainjob, e);
}

TEST(LaunchFiles, TwoNodesOfEightGpus) {
    TempDir dir;
    const auto project = write_project(dir / "two-nodes.json", 2, 8, "A100-80GB", 16);
    const auto w = launch_files(project.string(), dir / "out");
    check_all(w, {2, 8, true}, dir / "");
    EXPECT_NE(w.slurm.find("16 ranks on 2 nodes × 8 GPUs: NCCL between the GPUs"),
              std::string::npos)
        << w.slurm;
}

TEST(LaunchFiles, OneNodeOfCpusGivesCpuFiles) {
    TempDir dir;
    const auto w = launch_files(example("mlp-cpu.json"), dir / "out");
    check_all(w, {1, 2, false}, dir / "");
    EXPECT_NE(w.torchrun.find("NODE_RANK=${NODE_RANK:-0}"), std::string::npos) << w.torchrun;
}

TEST(LaunchFiles, ReplicasCountAsRanks) {
    TempDir dir;
    // One node: two replicas of a two-stage pipeline on its four GPUs.
    check_all(launch_files(example("resnet50-4gpu-2x2.json"), dir / "one"), {1, 4, true}, dir / "");
    // Two nodes: a pipeline of four on the first, its replica on the second.
    const auto project = write_project(dir / "dp.json", 2, 4, "H100-SXM", 4, 2);
    check_all(launch_files(project.string(), dir / "two"), {2, 4, true}, dir / "");
    // --data-parallel after -- counts as the run would.
    const auto single = write_project(dir / "pipeline.json", 2, 4, "H100-SXM", 4);
    const auto w = launch_files(single.string(), dir / "forwarded", {"--", "--data-parallel", "2"});
    check_all(w, {2, 4, true}, dir / "");
    EXPECT_NE(w.slurm.find("--device cuda --data-parallel 2 \"$@\""), std::string::npos) << w.slurm;
}

TEST(LaunchFiles, TensorSlicesCountAndTheirNodesAreReported) {
    TempDir dir;
    check_all(launch_files(example("gpt-tiny-t2p2-cpu.json"), dir / "cpu"), {1, 4, false},
              dir / "");
    // 13 nodes, each stage's 8 slices on its node; launchers number the
    // groups' first members first, so most ranks land elsewhere.
    const auto r =
        run_cli({"launch-files", example("gpt3-175b-p4d-t8.json"), "--out", (dir / "t8").string()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("104 ranks on 13 nodes × 8 GPUs"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Note: launchers number ranks node by node"), std::string::npos) << r.out;
    EXPECT_NE(read(dir / "t8" / "slurm.sbatch").find("on another node than the placement"),
              std::string::npos);
}

TEST(LaunchFiles, OneKindAtATimeAndTheDefaultFolder) {
    TempDir dir;
    fs::copy_file(example("mlp-cpu.json"), dir / "mlp.json");
    const auto r = run_cli({"launch-files", (dir / "mlp.json").string(), "--slurm"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "mlp-launch" / "slurm.sbatch")) << r.out;
    EXPECT_FALSE(fs::exists(dir / "mlp-launch" / "torchrun.sh"));
    EXPECT_NE(r.out.find("sbatch " + (dir / "mlp-launch" / "slurm.sbatch").string()),
              std::string::npos)
        << r.out;
    const auto k = run_cli({"launch-files", (dir / "mlp.json").string(), "--kubernetes",
                            "--torchrun", "--image", "example.org/pw:1"});
    ASSERT_EQ(k.code, 0) << k.err;
    EXPECT_TRUE(fs::exists(dir / "mlp-launch" / "trainjob.yaml"));
    EXPECT_NE(read(dir / "mlp-launch" / "pytorchjob.yaml").find("image: \"example.org/pw:1\""),
              std::string::npos);
    // Written again: replaced, not refused.
    ASSERT_EQ(run_cli({"launch-files", (dir / "mlp.json").string()}).code, 0);
}

TEST(LaunchFiles, BadInputsAreRefusedInWords) {
    TempDir dir;
    const auto missing = run_cli({"launch-files", (dir / "nowhere.json").string()});
    EXPECT_EQ(missing.code, 1);
    EXPECT_NE(missing.err.find("nowhere.json"), std::string::npos) << missing.err;
    EXPECT_FALSE(fs::exists(dir / "nowhere-launch"));

    write(dir / "broken.json", "{\"format\": \"pipewright-project\", \"version\": 1}");
    const auto invalid = run_cli({"launch-files", (dir / "broken.json").string()});
    EXPECT_EQ(invalid.code, 1);
    EXPECT_NE(invalid.err.find("broken.json: "), std::string::npos) << invalid.err;
    EXPECT_NE(invalid.err.find("problem"), std::string::npos) << invalid.err;

    fs::copy_file(example("mlp-cpu.json"), dir / "p.json");
    const std::string before = read(dir / "p.json");
    const auto over =
        run_cli({"launch-files", (dir / "p.json").string(), "--out", (dir / "p.json").string()});
    EXPECT_EQ(over.code, 2);
    EXPECT_NE(over.err.find("is the project this command reads"), std::string::npos) << over.err;
    EXPECT_EQ(read(dir / "p.json"), before);

    // A project whose name is one of the files, in the folder they go to.
    fs::copy_file(example("mlp-cpu.json"), dir / "torchrun.sh");
    const auto clash =
        run_cli({"launch-files", (dir / "torchrun.sh").string(), "--out", (dir / "").string()});
    EXPECT_EQ(clash.code, 2) << clash.out;
    EXPECT_NE(clash.err.find("is the project this command reads"), std::string::npos) << clash.err;

    const auto set_by_files =
        run_cli({"launch-files", (dir / "p.json").string(), "--", "--nnodes", "2"});
    EXPECT_EQ(set_by_files.code, 2);
    EXPECT_NE(set_by_files.err.find("--nnodes is set by each launch file"), std::string::npos)
        << set_by_files.err;
    // Refused by `pipewright run` before it starts: refused here.
    nlohmann::json sharded = nlohmann::json::parse(read(example("resnet50-4gpu-2x2.json")));
    sharded["data_parallel"]["zero_stage"] = 2;
    std::ofstream(dir / "zero2.json") << sharded.dump(2);
    const auto zero2 =
        run_cli({"launch-files", (dir / "zero2.json").string(), "--out", (dir / "zero2").string()});
    EXPECT_EQ(zero2.code, 1);
    EXPECT_NE(zero2.err.find("ZeRO stage 2 is simulation-only"), std::string::npos) << zero2.err;
    EXPECT_FALSE(fs::exists(dir / "zero2"));
    const auto typo = run_cli({"launch-files", (dir / "p.json").string(), "--", "--stepz", "2"});
    EXPECT_EQ(typo.code, 2);
    EXPECT_NE(typo.err.find("not those of `pipewright run`"), std::string::npos) << typo.err;
}

// GPT-3 on 13 nodes of 8 GPUs uses 98: 12 nodes with 8 and one with 2.
TEST(LaunchFiles, NodesWithFewerRanksAreLaidOutAsPlaced) {
    TempDir dir;
    const auto r =
        run_cli({"launch-files", example("gpt3-175b-p4d.json"), "--out", (dir / "out").string()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("98 ranks on 13 nodes of up to 8 GPUs (12 with 8, 1 with 2)"),
              std::string::npos)
        << r.out;
    const std::string slurm = read(dir / "out" / "slurm.sbatch");
    EXPECT_NE(slurm.find("#SBATCH --nodes=13\n#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:8\n"),
              std::string::npos)
        << slurm;
    EXPECT_NE(slurm.find("ranks_on_node=(8 8 8 8 8 8 8 8 8 8 8 8 2)"), std::string::npos);
    const std::string torchrun = read(dir / "out" / "torchrun.sh");
    EXPECT_NE(torchrun.find("  12) NPROC_PER_NODE=2 ;;\n  *) NPROC_PER_NODE=8 ;;"),
              std::string::npos)
        << torchrun;

    // Run with stand-ins: Slurm gets one host a task, in node order;
    // torchrun each node's own number.
    const fs::path bin = dir / "bin";
    fs::create_directories(bin);
    write(bin / "scontrol", "#!/bin/sh\nfor n in $(seq -w 1 13); do echo gpu$n; done\n");
    write(
        bin / "srun",
        "#!/bin/sh\necho \"srun $1 $2 $3\"; uniq -c \"$SLURM_HOSTFILE\" | tr -s ' ' | tail -n 2\n");
    write(bin / "python3", "#!/bin/sh\necho \"$6 $7\"\n");
    for (const char* f : {"scontrol", "srun", "python3"}) {
        fs::permissions(bin / f, fs::perms::owner_all);
    }
    const std::string path = "PATH='" + bin.string() + "':\"$PATH\" ";
    const auto batch =
        shell(path + "SLURM_JOB_NODELIST=x bash '" + (dir / "out" / "slurm.sbatch").string() + "'",
              dir / "");
    EXPECT_EQ(batch.code, 0) << batch.output;
    EXPECT_EQ(batch.output,
              "srun --nodes=13 --ntasks=98 --distribution=arbitrary\n 8 gpu12\n 2 gpu13\n");
    for (const auto& [node, nproc] : {std::pair{"12", "2"}, {"3", "8"}}) {
        const auto t = shell(path + "NODE_RANK=" + node + " MASTER_ADDR=gpu01 sh '" +
                                 (dir / "out" / "torchrun.sh").string() + "'",
                             dir / "");
        EXPECT_EQ(t.output, "--nproc_per_node " + std::string(nproc) + "\n") << node;
    }
    if (!have_yaml()) {
        GTEST_SKIP() << "python3-yaml is missing: the manifests were not read back";
    }
    // A job's pods all run as many ranks: a pod a rank.
    const auto pytorchjob = yaml_file(dir / "out" / "pytorchjob.yaml", dir / "");
    ASSERT_TRUE(pytorchjob);
    check_pytorchjob(*pytorchjob, {98, 1, true});
    const auto trainjob = yaml_file(dir / "out" / "trainjob.yaml", dir / "");
    ASSERT_TRUE(trainjob);
    check_trainjob(*trainjob, {98, 1, true});
}

TEST(LaunchFiles, JobNamesAndQuoting) {
    EXPECT_EQ(launch_job_name("/x/GPT3 175B_p4d.json"), "gpt3-175b-p4d");
    EXPECT_EQ(launch_job_name("/x/7b.json"), "pipewright-7b");
    EXPECT_EQ(launch_job_name("/x/---.json"), "pipewright");
    EXPECT_LE(launch_job_name("/x/" + std::string(100, 'a') + ".json").size(), 40U);
    EXPECT_EQ(shell_quoted("/shared/p.json"), "/shared/p.json");
    EXPECT_EQ(shell_quoted("my project's.json"), "'my project'\\''s.json'");
    EXPECT_EQ(shell_quoted(""), "''");
}

// A directory of stand-ins: `scontrol show hostnames` lists the node list,
// `srun` and `python3` print the command they were given.
fs::path stand_ins(const fs::path& dir) {
    const fs::path bin = dir / "bin";
    fs::create_directories(bin);
    write(bin / "scontrol", "#!/bin/sh\necho \"$3\" | tr , '\\n'\n");
    write(bin / "srun", "#!/bin/sh\necho \"MASTER=$MASTER_ADDR:$MASTER_PORT srun $*\"\n");
    write(bin / "python3", "#!/bin/sh\necho \"python3 $*\"\n");
    for (const char* f : {"scontrol", "srun", "python3"}) {
        fs::permissions(bin / f, fs::perms::owner_all);
    }
    return bin;
}

TEST(LaunchFiles, TheScriptsStartPipewrightRunAsItsEnvironmentModeExpects) {
    TempDir dir;
    const auto project = write_project(dir / "two-nodes.json", 2, 8, "A100-80GB", 16);
    const auto w = launch_files(project.string(), dir / "out", {"--", "--steps", "7"});
    const fs::path bin = stand_ins(dir / "");
    const std::string path = "PATH='" + bin.string() + "':\"$PATH\" ";
    const std::string abs = fs::absolute(project).lexically_normal().string();

    const auto batch = shell(path + "SLURM_JOB_NODELIST=gpu17,gpu18 bash '" +
                                 (w.folder / "slurm.sbatch").string() + "' --warmup 2",
                             dir / "");
    EXPECT_EQ(batch.code, 0) << batch.output;
    EXPECT_EQ(batch.output,
              "MASTER=gpu17:29500 srun --nodes=2 --ntasks=16 --ntasks-per-node=8 "
              "--kill-on-bad-exit=1 pipewright run " +
                  abs + " --launcher slurm --device cuda --steps 7 --warmup 2\n");

    const auto node1 = shell(path + "NODE_RANK=1 MASTER_ADDR=gpu17 sh '" +
                                 (w.folder / "torchrun.sh").string() + "' --warmup 2",
                             dir / "");
    EXPECT_EQ(node1.code, 0) << node1.output;
    EXPECT_EQ(node1.output,
              "python3 -m torch.distributed.run --no_python --nnodes 2 "
              "--nproc_per_node 8 --node_rank 1 --master_addr gpu17 --master_port "
              "29500 --redirects 1 --tee 1 pipewright run " +
                  abs + " --launcher torchrun --device cuda --steps 7 --warmup 2\n");
    // Several nodes: each must say which it is.
    const auto unnamed =
        shell(path + "env -u NODE_RANK sh '" + (w.folder / "torchrun.sh").string() + "'", dir / "");
    EXPECT_NE(unnamed.code, 0);
    EXPECT_NE(unnamed.output.find("set NODE_RANK to the index of this node"), std::string::npos)
        << unnamed.output;
}

// The library the studio calls: names, contents and what is executable.
TEST(LaunchFiles, TheLibraryReturnsTheFilesAndWritesThem) {
    TempDir dir;
    const LoadedProject loaded = load_project_file(example("mlp-cpu.json"));
    ASSERT_TRUE(loaded.project);
    Diagnostics problems;
    const auto project = analyze_project(*loaded.project, {}, problems);
    ASSERT_TRUE(project) << problems.size();
    const LaunchLayout layout = launch_layout(*project);
    EXPECT_EQ(layout, (LaunchLayout{2, 1, 2, {2}, false, {"localhost"}, 0}));
    LaunchFileOptions options;
    options.project_path = "/shared/mlp-cpu.json";
    options.kinds = {LaunchKind::torchrun};
    const auto files = make_launch_files(*project, options);
    ASSERT_EQ(files.size(), 1U);
    EXPECT_EQ(files[0].name, "torchrun.sh");
    EXPECT_TRUE(files[0].executable);
    EXPECT_NE(files[0].text.find("PROJECT=/shared/mlp-cpu.json\n"), std::string::npos);
    options.project_path = "relative.json";
    EXPECT_THROW((void)make_launch_files(*project, options), LaunchFilesError);
    options.project_path = "/shared/new\nline.json";
    EXPECT_THROW((void)make_launch_files(*project, options), LaunchFilesError);

    ::umask(022);
    const auto written = write_launch_files(files, dir / "deep" / "folder");
    ASSERT_EQ(written.size(), 1U);
    struct stat st {};
    ASSERT_EQ(::stat(written[0].c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755U);
}

// ---- Real runs, where the backend and Debian's torchrun are there ----

fs::path cli_path() {
    return fs::path(PIPEWRIGHT_CLI_PATH);
}

bool have_backend() {
    return std::getenv("PIPEWRIGHT_BACKEND") != nullptr ||
           fs::exists(cli_path().parent_path() / "pipewright-backend");
}

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 29500;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
        port = ntohs(addr.sin_port);
    }
    if (fd >= 0) {
        ::close(fd);
    }
    return port;
}

TEST(LaunchFilesRun, TheTorchrunScriptTrainsATwoStageCpuProject) {
    if (!have_backend()) {
        GTEST_SKIP() << "the backend program is not beside " << cli_path()
                     << " (built with -DPIPEWRIGHT_BUILD_BACKEND=ON)";
    }
    // The build's own Torch's torchrun where it is not Debian's: the agent
    // hosts the store, whose protocol changed between 1.13 and 2.x
    // (scripts/check-torch-upstream.sh sets PIPEWRIGHT_TORCHRUN_PYTHON).
    const char* given = std::getenv("PIPEWRIGHT_TORCHRUN_PYTHON");
    const std::string python = given != nullptr && *given != '\0' ? given : "/usr/bin/python3";
    if (std::system((python + " -c 'import torch.distributed.run' > /dev/null 2>&1").c_str()) !=
        0) {
        GTEST_SKIP() << python
                     << " -m torch.distributed.run is not available (install Debian's "
                        "python3-torch)";
    }
    TempDir dir;
    fs::copy_file(example("mlp-cpu.json"), dir / "mlp.json");
    const auto r =
        run_cli({"launch-files", (dir / "mlp.json").string(), "--torchrun", "--", "--steps", "2",
                 "--threads-per-rank", "1", "--timeout", "30", "--out", (dir / "run").string()});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto run = shell("PIPEWRIGHT='" + cli_path().string() + "' PYTHON='" + python +
                               "' MASTER_PORT=" + std::to_string(free_port()) + " sh '" +
                               (dir / "mlp-launch" / "torchrun.sh").string() + "'",
                           dir / "");
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_NE(run.output.find("launcher: torchrun, rank 0 of 2"), std::string::npos) << run.output;
    EXPECT_TRUE(fs::exists(dir / "run" / "timeline.json")) << run.output;
}

TEST(LaunchFilesRun, TheBatchScriptTrainsUnderAStandInSrun) {
    if (!have_backend()) {
        GTEST_SKIP() << "the backend program is not beside " << cli_path()
                     << " (built with -DPIPEWRIGHT_BUILD_BACKEND=ON)";
    }
    TempDir dir;
    fs::copy_file(example("mlp-cpu.json"), dir / "mlp.json");
    const auto r =
        run_cli({"launch-files", (dir / "mlp.json").string(), "--slurm", "--", "--steps", "2",
                 "--threads-per-rank", "1", "--timeout", "30", "--out", (dir / "run").string()});
    ASSERT_EQ(r.code, 0) << r.err;
    // srun as Slurm starts the tasks of a step: each with its SLURM_PROCID,
    // SLURM_LOCALID and the step's variables, all on this one node.
    const fs::path bin = dir / "bin";
    fs::create_directories(bin);
    write(bin / "scontrol", "#!/bin/sh\necho localhost\n");
    write(bin / "srun",
          "#!/bin/bash\n"
          "for a in \"$@\"; do case $a in --ntasks=*) n=${a#--ntasks=};; --*) ;; *) break;; "
          "esac; shift; done\n"
          "pids=()\n"
          "for ((i = 0; i < n; i++)); do\n"
          "  SLURM_PROCID=$i SLURM_LOCALID=$i SLURM_NODEID=0 SLURM_NTASKS=$n SLURM_STEP_ID=0 "
          "\"$@\" &\n"
          "  pids+=($!)\n"
          "done\n"
          "status=0\n"
          "for p in \"${pids[@]}\"; do wait $p || status=1; done\n"
          "exit $status\n");
    for (const char* f : {"scontrol", "srun"}) {
        fs::permissions(bin / f, fs::perms::owner_all);
    }
    const auto run =
        shell("PATH='" + bin.string() + "':\"$PATH\" PIPEWRIGHT='" + cli_path().string() +
                  "' SLURM_JOB_NODELIST=localhost MASTER_PORT=" + std::to_string(free_port()) +
                  " bash '" + (dir / "mlp-launch" / "slurm.sbatch").string() + "'",
              dir / "");
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_NE(run.output.find("launcher: slurm, rank 0 of 2, master localhost:"), std::string::npos)
        << run.output;
    EXPECT_TRUE(fs::exists(dir / "run" / "timeline.json")) << run.output;
    EXPECT_TRUE(fs::exists(dir / "run" / "rank-1" / "summary.json")) << run.output;
}

}  // namespace
}  // namespace pipewright
