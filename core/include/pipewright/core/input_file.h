#pragma once

// Every file Pipewright reads (project, profile, timeline, schedule CSV, device
// catalog) comes through here, so one bound protects every command: a path
// such as /dev/zero or a multi-gigabyte file must end in a message, not in a
// read that never ends or exhausts memory.

#include <cstdint>
#include <filesystem>
#include <string>

namespace pipewright {

// 256 MiB: a project of 10^5 devices or a timeline of 10^6 events is far
// below it, while whole-file parsing of anything larger (JSON keeps several
// bytes of memory per input byte) would threaten the machine.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{256} * 1024 * 1024;

// The whole file as bytes. Throws std::runtime_error naming the file when it
// is a folder, a device (/dev/zero, a terminal) or socket, cannot be read, or
// holds more than `max_bytes` ("FILE: larger than 256 MiB (268435456 bytes)").
// Pipes and FIFOs are read up to the same bound.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& path,
                                         std::uintmax_t max_bytes = kMaxInputFileBytes);

}  // namespace pipewright
