"""What the validation scripts (validate_*.sh) share in Python, beside their
shell preamble (validation_common.sh): the cluster they build their projects
on (nodes of up to eight GPUs of one catalog type in one container, as a DGX
A100 or an HGX board holds them, NVLink inside at 300 GB/s and 5 µs, the
node's network between nodes), and running `pipewright simulate` on them."""

import json
import os
import subprocess

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


def simulate_json(pipewright, path, efficiency="", timeout=600):
    """`pipewright simulate PATH --json` (with the flat model at `efficiency`
    when given): (the result, "") or (None, the last line of its error,
    where the problem is named)."""
    cmd = [pipewright, "simulate", path, "--json"]
    if efficiency:
        cmd += ["--efficiency", efficiency]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.strip().splitlines()]
        return None, lines[-1] if lines else f"exit {done.returncode}"
    return json.loads(done.stdout), ""


def write_project(folder, name, project):
    """Writes `project` as FOLDER/NAME.json; returns its path."""
    path = os.path.join(folder, name + ".json")
    with open(path, "w") as f:
        json.dump(project, f, indent=1)
    return path


def print_row(cells):
    """One row of a markdown table."""
    print("| " + " | ".join(cells) + " |")
