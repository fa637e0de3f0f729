// `pipewright-backend`: the program that trains and measures with LibTorch.
// Users do not call it: `pipewright run`, `pipewright profile` (and the
// launcher, for each rank's `worker`) execute it with their own arguments.

#include <iostream>
#include <new>

#include "backend_commands.h"

int main(int argc, char** argv) {
    try {
        return pipewright::cli::run(argc, argv, std::cout, std::cerr,
                                    pipewright::cli::torch_backend_commands());
    } catch (const std::bad_alloc&) {
        std::cerr << "pipewright: out of memory: this run needs more memory than is available; "
                     "try fewer micro-batches or a smaller batch\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "pipewright: internal error: " << e.what() << '\n';
        return 1;
    }
}
