#!/usr/bin/env python3
"""Writes a Pipewright project with N devices and one layer per device.

Used to measure how validate and simulate scale with the device count
(bench/README.md, "Device count"): N linear layers of 256 × 256 in float32,
N A100-80GB devices, all in one container of one node unless --per-node K
puts them in nodes of K (one container each), stage i = layer i on device i,
batch 64 in 4 micro-batches, schedule gpipe unless told otherwise (1f1b needs
at least as many micro-batches as stages).

One container is the hard case for the simulator: every pair of devices there
has a link of its own (between nodes, a direction is shared by the node).

    python3 bench/make_wide_project.py N OUT.json [--per-node K] [--schedule NAME]
                                       [--microbatches M] [--data-parallel D]

With --data-parallel D the pipeline has N / D stages on the first N / D
devices, and D replicas of it fill the N devices (the default layout).
"""

import argparse
import json


def project(devices: int, per_node: int, schedule: str, microbatches: int,
            data_parallel: int = 1) -> dict:
    per_node = per_node if per_node > 0 else devices
    stages = devices // data_parallel
    nodes = []
    placement = []
    for n in range((devices + per_node - 1) // per_node):
        gpus = [{"name": f"gpu{g}", "spec": "A100-80GB"}
                for g in range(min(per_node, devices - n * per_node))]
        nodes.append({"name": f"node{n}", "containers": [{"name": "c0", "devices": gpus}]})
        placement += [{"device": f"node{n}/c0/{gpu['name']}", "layers": [f"l{n * per_node + g}"]}
                      for g, gpu in enumerate(gpus) if n * per_node + g < stages]
    layers = [{"name": f"l{i}", "type": "linear", "in_features": 256, "out_features": 256}
              for i in range(stages)]
    out = {
        "format": "pipewright-project",
        "version": 1,
        "model": {
            "name": f"wide{devices}",
            "input": {"shape": [256], "dtype": "float32"},
            "loss": "mse",
            "layers": layers,
        },
        "topology": {"nodes": nodes},
        "placement": placement,
        "training": {
            "batch_size": 16 * microbatches,
            "microbatches": microbatches,
            "schedule": schedule,
            "optimizer": {"type": "sgd", "lr": 0.001},
            "dtype": "float32",
        },
    }
    if data_parallel > 1:
        out["training"]["batch_size"] *= data_parallel
        out["data_parallel"] = {"size": data_parallel}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("devices", type=int)
    parser.add_argument("out")
    parser.add_argument("--per-node", type=int, default=0,
                        help="devices per node (default: all in one)")
    parser.add_argument("--schedule", default="gpipe")
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--data-parallel", type=int, default=1,
                        help="replicas of a pipeline of N / D stages")
    args = parser.parse_args()
    if args.data_parallel < 1 or args.devices % args.data_parallel != 0:
        parser.error("--data-parallel must divide the device count")
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(project(args.devices, args.per_node, args.schedule, args.microbatches,
                          args.data_parallel), f)


if __name__ == "__main__":
    main()
