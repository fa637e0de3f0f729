#!/usr/bin/env python3
"""Measures how `pipewright validate` and `simulate` scale with the device count.

For every N it writes a project with bench/make_wide_project.py (N devices
in one container, one linear layer each, 4 micro-batches, gpipe; --per-node K
to spread them over nodes of K), then runs each (binary, command, N) case
once per round, the cases taking turns, and prints the median wall time and
maximum resident set size over the rounds as a Markdown table (see
bench/README.md, "Device count").
Wall time and peak RSS are what `/usr/bin/time -v` reports.

    python3 bench/device_scaling.py --binary after=build/h2-rel/cli/pipewright \\
        [--binary before=/tmp/base/build-rel/cli/pipewright] [--rounds 3] \\
        [--simulate 1000,3000,10000] [--validate 1000,3000,10000,100000] \\
        [--timeout 120] [--memory-limit-gib 8]

A run that exceeds --timeout is killed and reported as such, with its wall
time and peak RSS up to then; one that fails with its exit status.
"""

import argparse
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def children_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def run_once(binary, command, project, timeout, memory_limit_bytes):
    """Wall time, peak RSS and how the run ended, from `/usr/bin/time -v`.
    At the timeout the program itself is killed, so that /usr/bin/time still
    reports its peak RSS up to then."""

    def limit():
        # Keeps a quadratic run from taking the machine's memory from others.
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit_bytes, memory_limit_bytes))

    started = time.monotonic()
    timer = subprocess.Popen(["/usr/bin/time", "-v", binary, command, str(project)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             preexec_fn=limit)
    timed_out = False
    try:
        stderr = timer.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        timed_out = True
        for child in children_of(timer.pid):
            os.kill(child, signal.SIGKILL)
        stderr = timer.communicate()[1]
    wall = time.monotonic() - started
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", stderr)
    if m:
        parts = [float(p) for p in m.group(1).split(":")]
        wall = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    status = re.search(r"Exit status: (\d+)", stderr)
    if timed_out:
        outcome = f"killed at {timeout:.0f} s"
    elif status and status.group(1) != "0":
        last = [l for l in stderr.splitlines() if l.startswith("pipewright")]
        outcome = f"exit {status.group(1)}" + (f": {last[-1][:80]}" if last else "")
    else:
        outcome = "ok"
    return {"wall_s": wall, "rss_mib": int(rss.group(1)) / 1024 if rss else None,
            "status": outcome}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", action="append", required=True,
                        help="LABEL=PATH of a pipewright binary (repeat to compare)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--simulate", default="1000,3000,10000")
    parser.add_argument("--validate", default="1000,3000,10000,100000")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--memory-limit-gib", type=float, default=8)
    parser.add_argument("--per-node", type=int, default=0)
    args = parser.parse_args()

    binaries = [b.split("=", 1) for b in args.binary]
    sizes = {"validate": [int(n) for n in args.validate.split(",") if n],
             "simulate": [int(n) for n in args.simulate.split(",") if n]}
    with tempfile.TemporaryDirectory() as folder:
        projects = {}
        for n in sorted(set(sizes["validate"]) | set(sizes["simulate"])):
            projects[n] = Path(folder) / f"wide-{n}.json"
            subprocess.run([sys.executable, str(HERE / "make_wide_project.py"), str(n),
                            str(projects[n]), "--per-node", str(args.per_node)], check=True)
        cases = [(label, path, command, n) for command in ("validate", "simulate")
                 for n in sizes[command] for label, path in binaries]
        results = {case: [] for case in cases}
        for r in range(args.rounds):
            for case in cases:
                label, path, command, n = case
                result = run_once(path, command, projects[n], args.timeout,
                                  int(args.memory_limit_gib * 2 ** 30))
                results[case].append(result)
                print(f"round {r + 1}: {label} {command} N={n}: {result}", file=sys.stderr,
                      flush=True)

    print("| command | N | binary | wall (median) | max RSS (median) | runs |")
    print("|---|---:|---|---:|---:|---|")
    for case in cases:
        label, _, command, n = case
        runs = results[case]
        walls = [r["wall_s"] for r in runs]
        rss = [r["rss_mib"] for r in runs if r["rss_mib"] is not None]
        statuses = sorted({r["status"] for r in runs})
        print(f"| {command} | {n:,} | {label} | {statistics.median(walls):.2f} s | "
              + (f"{statistics.median(rss):,.0f} MiB" if rss else "n/a")
              + f" | {', '.join(statuses)} |")


if __name__ == "__main__":
    main()
