#include "pipewright/core/run_folder_names.h"

#include <regex>

#include "pipewright/core/file_names.h"

namespace pipewright {

std::string run_folder_stem(std::string_view model_name, const std::tm& local) {
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    return safe_file_stem(model_name) + "-" + stamp;
}

std::string first_free_run_folder(const std::string& stem,
                                  const std::function<bool(const std::string&)>& taken) {
    std::string name = stem;
    for (int i = 2; taken(name); ++i) {
        name = stem + "-" + std::to_string(i);
    }
    return name;
}

std::string params_file_name(int stage, int replica, int member) {
    return "params-stage-" + std::to_string(stage) +
           (replica == 0 ? "" : "-replica-" + std::to_string(replica)) +
           (member == 0 ? "" : "-tensor-" + std::to_string(member)) + ".pt";
}

bool is_run_output(const std::string& name) {
    static const std::regex outputs(
        R"(\.?(run\.log|summary\.json|metrics\.json|timeline\.json|trace\.json|)"
        R"(rank-[0-9]+\.(json|log)|)"
        R"(params-stage-[0-9]+(-replica-[0-9]+)?(-tensor-[0-9]+)?\.pt))"
        R"((\.[0-9]+\.[0-9]+\.tmp)?)");
    return std::regex_match(name, outputs);
}

}  // namespace pipewright
