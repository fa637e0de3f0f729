// Every backward allocates fresh gradient tensors (16 MiB for a 2048 x 2048
// linear layer) and frees them after adding them into .grad. With glibc's
// defaults such blocks are mmap'ed and returned to the kernel on free, or
// trimmed off the top of the heap, so the next micro-batch page-faults the
// same 16 MiB in again: on a virtual machine that cost 40-70 ms per layer
// backward, more than the arithmetic, and made the profile's times depend on
// the order allocations happened to come in. Keeping freed memory for reuse
// makes both the runs and the profile time the computation.

#include "execution/allocator_tuning.h"

#include <malloc.h>

namespace pipewright::backend {

void keep_freed_memory_for_reuse() {
    // Blocks below 32 MiB (glibc's largest allowed threshold) come from the
    // heap, and the heap keeps up to 1 GiB of free memory at its top.
    (void)mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    (void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
    (void)mallopt(M_TOP_PAD, 64 * 1024 * 1024);
}

}  // namespace pipewright::backend
