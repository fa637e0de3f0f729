#pragma once

namespace pipewright::backend {

// Tunes glibc's allocator for a training process (worker or profiler): see
// allocator_tuning.cpp. Call once, before the model is built.
void keep_freed_memory_for_reuse();

}  // namespace pipewright::backend
