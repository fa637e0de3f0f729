// The command line run in this process, for the commands whose output the
// module hands on as is: the catalogs (`schedules`, `devices`, `layers
// --json`), `validate` and `compare` print exactly what the program prints,
// with no program started. The commands that train or measure need
// LibTorch, which this module never loads: they stay with the `pipewright`
// program, and are refused here before the command line sees them.

#include <algorithm>
#include <array>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <pybind11/stl.h>

#include "commands.h"

namespace py = pybind11;

namespace pipewright::python {

namespace {

constexpr std::array<std::string_view, 5> kInProcess{"schedules", "devices", "layers", "validate",
                                                     "compare"};

// (exit code, stdout, stderr) of `pipewright ARGS...`.
py::tuple run_command(const std::vector<std::string>& arguments) {
    if (arguments.empty() ||
        std::find(kInProcess.begin(), kInProcess.end(), arguments.front()) == kInProcess.end()) {
        std::string known;
        for (const std::string_view name : kInProcess) {
            known += (known.empty() ? "" : ", ") + std::string(name);
        }
        throw py::value_error("only " + known +
                              " run in process; the others (run, profile, import) need "
                              "LibTorch and stay with the pipewright program");
    }
    std::vector<const char*> argv{"pipewright"};
    for (const std::string& a : arguments) {
        argv.push_back(a.c_str());
    }
    // None of the commands above hands anything to the backend program.
    const cli::BackendCommands no_backend;
    std::ostringstream out;
    std::ostringstream err;
    int code = 0;
    {
        py::gil_scoped_release unlocked;
        code = cli::run(static_cast<int>(argv.size()), argv.data(), out, err, no_backend);
    }
    return py::make_tuple(code, out.str(), err.str());
}

}  // namespace

void bind_catalogs(py::module_& m) {
    m.def("run_command", &run_command, py::arg("arguments"),
          "(exit code, stdout, stderr) of a pipewright command that runs in this process");
}

}  // namespace pipewright::python
