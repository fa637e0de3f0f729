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


def imported_model(pipewright, preset_path, seq, folder):
    """The decoder of a model preset (assets/models) as `pipewright import`
    makes it at `seq` tokens, imported once into FOLDER."""
    name = os.path.splitext(os.path.basename(preset_path))[0]
    path = os.path.join(folder, f"{name}-{seq}.import.json")
    if not os.path.exists(path):
        subprocess.run([pipewright, "import", preset_path, "--seq-len", str(seq), "--out", path],
                       check=True, capture_output=True)
    with open(path) as f:
        return json.load(f)["model"]


def project_of(model, topology, placement, training, **parallelism):
    """A project document: the model on the topology as placed, trained so,
    with any of tensor_parallel, data_parallel, context_parallel given."""
    return {"format": "pipewright-project", "version": 1, "model": model,
            "topology": topology, "placement": placement, "training": training,
            **parallelism}


def write_project(folder, name, project):
    """Writes `project` as FOLDER/NAME.json; returns its path."""
    path = os.path.join(folder, name + ".json")
    with open(path, "w") as f:
        json.dump(project, f, indent=1)
    return path


def print_row(cells):
    """One row of a markdown table."""
    print("| " + " | ".join(cells) + " |")
