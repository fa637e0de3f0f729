#!/usr/bin/env python3
"""A sweep from Python: simulations in process (`import pipewright`) against
`pipewright simulate --json` processes, each parsed as a script would.

    PYTHONPATH=build/py/python python3 bench/python_sweep.py --cli build/py/cli/pipewright

prints the median time of one simulation each way and their ratio
(bench/README.md, "Python sweeps").
"""

import argparse
import json
import statistics
import subprocess
import time

import pipewright


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="the pipewright program")
    parser.add_argument("--project", default="assets/examples/mlp-cpu.json")
    parser.add_argument("--simulations", type=int, default=1000,
                        help="in-process simulations (default 1000)")
    parser.add_argument("--processes", type=int, default=1000,
                        help="pipewright simulate processes (default 1000)")
    args = parser.parse_args()

    project = pipewright.load(args.project)
    # A sweep over the micro-batch counts the project's schedule accepts.
    batch = project.simulate().batch_size
    counts = []
    for m in (m for m in range(1, batch + 1) if batch % m == 0):
        try:
            project.simulate(microbatches=m)
            counts.append(m)
        except pipewright.ProjectError:
            pass

    in_process = []
    for i in range(args.simulations):
        m = counts[i % len(counts)]
        start = time.perf_counter()
        result = project.simulate(microbatches=m)
        _ = result.iteration_time_s
        in_process.append(time.perf_counter() - start)

    processes = []
    for i in range(args.processes):
        m = counts[i % len(counts)]
        start = time.perf_counter()
        done = subprocess.run([args.cli, "simulate", args.project, "--json", "-m", str(m)],
                              capture_output=True, text=True, check=True)
        _ = json.loads(done.stdout)["iteration_time_s"]
        processes.append(time.perf_counter() - start)

    a = statistics.median(in_process)
    b = statistics.median(processes)
    print(f"project        {args.project} (micro-batches {counts})")
    print(f"in process     {len(in_process)} simulations, median {a * 1e6:.0f} µs, "
          f"total {sum(in_process):.2f} s")
    print(f"processes      {len(processes)} runs, median {b * 1e3:.2f} ms, "
          f"total {sum(processes):.2f} s")
    print(f"ratio          {b / a:.0f}x faster in process")


if __name__ == "__main__":
    main()
