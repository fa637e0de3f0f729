#pragma once

#include <ostream>

#include "import_command.h"

namespace pipewright::cli {

// `pipewright import config.json`: a project of the decoder a Hugging Face
// `transformers` config describes, placed over --nodes × --devices by the
// planner. Runs in the front end: nothing to measure, so no LibTorch.
int run_config_import(const ImportArgs& args, std::ostream& out, std::ostream& err);

}  // namespace pipewright::cli
