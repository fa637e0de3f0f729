#include "cli_runner.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "pipewright/core/project_io.h"

namespace pipewright::test {

namespace fs = std::filesystem;

CliResult run_cli(const std::string& args, const fs::path& dir, const std::string& tag) {
    const fs::path out = dir / (tag + "-output.txt");
    const std::string cmd =
        std::string(PIPEWRIGHT_CLI_PATH) + " " + args + " > " + out.string() + " 2>&1";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(cmd.c_str());
    CliResult r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.output = read_text_file(out);
    return r;
}

fs::path temp_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() /
                 ("pipewright-backend-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

fs::path write_project(const fs::path& dir, const MlpSpec& spec) {
    const fs::path p = dir / "project.json";
    write_file_atomically(p, mlp_project_json(spec));
    return p;
}

std::vector<pid_t> processes_mentioning(const std::string& text) {
    std::vector<pid_t> found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        std::ifstream in(entry.path() / "cmdline", std::ios::binary);
        std::stringstream cmdline;
        cmdline << in.rdbuf();
        const pid_t pid = std::stoi(name);
        // The test process itself never runs a pipewright command line.
        if (pid != ::getpid() && cmdline.str().find(text) != std::string::npos &&
            cmdline.str().find("pipewright") != std::string::npos) {
            found.push_back(pid);
        }
    }
    return found;
}

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        throw std::runtime_error("socket() failed");
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ::close(fd);
        throw std::runtime_error("cannot find a free port");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
}

std::string last_json_object(const std::string& output) {
    const auto at = output.rfind("\n{");
    return at == std::string::npos ? output : output.substr(at + 1);
}

CliResult run_exactly(const std::filesystem::path& project, int steps,
                      const std::filesystem::path& out, const std::filesystem::path& dir) {
    return run_cli("run " + project.string() + " --steps " + std::to_string(steps) +
                       " --dtype float64 --save-params --threads-per-rank 1 --json --out " +
                       out.string(),
                   dir);
}

nlohmann::json token_model_project(const std::string& name, nlohmann::json layers,
                                   nlohmann::json placement, int devices, nlohmann::json training,
                                   int sequence) {
    using nlohmann::json;
    json cpus = json::array();
    for (int d = 0; d < devices; ++d) {
        cpus.push_back({{"name", "cpu" + std::to_string(d)}, {"spec", "cpu"}});
    }
    return {
        {"format", "pipewright-project"},
        {"version", 1},
        {"model",
         {{"name", name},
          {"input", {{"shape", {sequence}}, {"dtype", "int64"}}},
          {"loss", "cross_entropy"},
          {"layers", std::move(layers)}}},
        {"topology",
         {{"nodes",
           json::array({{{"name", "node0"},
                         {"containers", json::array({{{"name", "c0"}, {"devices", cpus}}})}}})}}},
        {"placement", std::move(placement)},
        {"training", std::move(training)}};
}

nlohmann::json tiny_block(const std::string& name, bool llama) {
    nlohmann::json block = {
        {"name", name}, {"type", "transformer_block"}, {"hidden", 32}, {"heads", 4}};
    if (llama) {
        block.update({{"kv_heads", 2},
                      {"ffn_hidden", 48},
                      {"activation", "swiglu"},
                      {"norm", "rmsnorm"},
                      {"bias", false},
                      {"qkv_bias", false},
                      {"rotary", true}});
    }
    return block;
}

nlohmann::json tiny_final_norm(bool llama) {
    return {{"name", "ln_f"}, {"type", llama ? "rmsnorm" : "layernorm"}, {"features", 32}};
}

nlohmann::json tiny_head() {
    return {{"name", "head"},
            {"type", "linear"},
            {"in_features", 32},
            {"out_features", 64},
            {"bias", false}};
}

}  // namespace pipewright::test
