// `pipewright-backend`: the program that trains and measures with LibTorch.
// Users do not call it: `pipewright run`, `pipewright profile` (and the
// launcher, for each rank's `worker`) execute it with their own arguments.

#include <iostream>
#include <new>
#include <string_view>

#include "backend_commands.h"
#include "pipewright/backend/profiler.h"

int main(int argc, char** argv) {
    try {
        // The profiler's second rank (profile/transfer_peer.h), started by
        // the profiler itself with arguments only it writes.
        if (argc >= 2 && std::string_view(argv[1]) == pipewright::backend::transfer_peer_command) {
            return pipewright::backend::run_transfer_peer({argv + 2, argv + argc}, std::cerr);
        }
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
