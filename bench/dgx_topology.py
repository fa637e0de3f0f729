"""The cluster the validation scripts (validate_*.sh) build their projects on:
nodes of up to eight GPUs of one catalog type in one container, as a DGX A100
or an HGX board holds them, NVLink inside (300 GB/s, 5 µs) and the node's
network between nodes."""

GPUS_PER_NODE = 8


def dgx_topology(gpus, spec, inter_node_GBps):
    """A project's `topology` for `gpus` GPUs of `spec`, eight to a node
    (fewer when there are fewer), named nodeN/c0/gpuG."""
    per_node = min(GPUS_PER_NODE, gpus)
    nodes = [{"name": f"node{n}", "containers": [{"name": "c0", "devices": [
        {"name": f"gpu{g}", "spec": spec} for g in range(per_node)]}]}
        for n in range((gpus + GPUS_PER_NODE - 1) // GPUS_PER_NODE)]
    return {
        "links": {
            "intra_container": {"bandwidth_GBps": 300, "latency_us": 5},
            "intra_node": {"bandwidth_GBps": 32, "latency_us": 10},
            "inter_node": {"bandwidth_GBps": inter_node_GBps, "latency_us": 10},
        },
        "nodes": nodes,
    }


def device(g):
    """The path of GPU `g` counted across the nodes."""
    return f"node{g // GPUS_PER_NODE}/c0/gpu{g % GPUS_PER_NODE}"
