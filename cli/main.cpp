#include <iostream>
#include <new>

#include "commands.h"

int main(int argc, char** argv) {
    try {
        return pipewright::cli::run(argc, argv, std::cout, std::cerr);
    } catch (const std::bad_alloc&) {
        // A case too large for this machine (millions of actions, or a huge
        // output) ends with a message and exit 1, not an abort (issue 18).
        std::cerr << "pipewright: out of memory: this case needs more memory than is available; "
                     "try fewer micro-batches or stages, or leave out --trace and --timeline\n";
        return 1;
    } catch (const std::exception& e) {
        // A last resort: every expected failure is reported where it happens.
        std::cerr << "pipewright: internal error: " << e.what() << '\n';
        return 1;
    }
}
