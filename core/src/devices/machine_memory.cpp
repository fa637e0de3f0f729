#include "pipewright/core/machine_memory.h"

#include <fstream>
#include <string>

namespace pipewright {

std::int64_t available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::int64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib) {
        std::getline(meminfo, unit);
        if (key == "MemAvailable:") {
            return kib * 1024;
        }
    }
    return 0;
}

}  // namespace pipewright
