#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
    try {
        return pipewright::cli::run(argc, argv, std::cout, std::cerr);
    } catch (const std::exception& e) {
        // A last resort: every expected failure is reported where it happens.
        std::cerr << "pipewright: internal error: " << e.what() << '\n';
        return 1;
    }
}
