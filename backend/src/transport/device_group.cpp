#include "pipewright/backend/transport.h"

#ifdef PIPEWRIGHT_WITH_NCCL
#include "transport/transport_nccl.h"
#endif

namespace pipewright::backend {

c10::intrusive_ptr<CollectiveGroup> make_device_group(c10::intrusive_ptr<c10d::Store> store,
                                                      const std::string& prefix,
                                                      const std::string& master_host, int rank,
                                                      int size, const torch::Device& device,
                                                      std::chrono::milliseconds timeout) {
#ifdef PIPEWRIGHT_WITH_NCCL
    if (device.is_cuda()) {
        return make_nccl_group(std::move(store), prefix + "nccl", rank, size, timeout);
    }
#else
    (void)device;
#endif
    return make_gloo_group(std::move(store), prefix + "gloo", master_host, rank, size, timeout);
}

}  // namespace pipewright::backend
