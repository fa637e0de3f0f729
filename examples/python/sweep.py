#!/usr/bin/env python3
"""Sweep pipeline schedules and micro-batch counts over a project, in process.

    python3 examples/python/sweep.py                       # a shipped example
    python3 examples/python/sweep.py my-project.json -m 2,4,8 -s 1f1b,zb-h1
    python3 examples/python/sweep.py --json > sweep.json    # the rows as JSON

Every pair (schedule, micro-batches) is one project.simulate(): the same
numbers as `pipewright simulate PROJECT --schedule S --microbatches M`, each
computed in process (a fraction of a millisecond for the example) rather than
by starting a program. Pairs the project cannot run (a count
that does not divide the batch, a schedule that needs more stages per
device) are skipped, and a schedule that never runs is named with the reason.
The table holds the iteration time of each pair; the fastest layout where
every device fits is marked.

Needs the module on the path: the Debian package python3-pipewright,
`pip install .`, or PYTHONPATH=<build>/python (docs/python.md).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import pipewright

EXAMPLE = "resnet50-2gpu-pipelined.json"
# The source tree's examples, then those the Debian package `pipewright` installs.
EXAMPLE_DIRS = [pathlib.Path(__file__).resolve().parents[2] / "assets" / "examples",
                pathlib.Path("/usr/share/pipewright/examples")]


def default_project() -> pathlib.Path:
    for folder in EXAMPLE_DIRS:
        if (folder / EXAMPLE).is_file():
            return folder / EXAMPLE
    sys.exit(f"sweep.py: no {EXAMPLE} in {', '.join(map(str, EXAMPLE_DIRS))}; name a project")


def sweep(project: pipewright.Project, schedules: list[str], microbatches: list[int]):
    """(rows, skipped): one row per pair that simulates, in sweep order;
    skipped maps each schedule that never ran to the reason."""
    rows, reasons = [], {}
    for schedule in schedules:
        for count in microbatches:
            try:
                result = project.simulate(schedule=schedule, microbatches=count)
            except pipewright.ProjectError as error:
                reasons.setdefault(schedule, error.problems[0][1] if error.problems else str(error))
                continue
            rows.append({
                "schedule": schedule,
                "microbatches": count,
                "iteration_time_s": result.iteration_time_s,
                "bubble": result.bubble,
                "throughput": result.throughput,
                "all_fit": result.all_fit,
            })
    ran = {row["schedule"] for row in rows}
    return rows, {name: why for name, why in reasons.items() if name not in ran}


def fastest(rows: list[dict]):
    """The row with the shortest iteration among those where every device fits."""
    fitting = [row for row in rows if row["all_fit"]]
    return min(fitting, key=lambda row: row["iteration_time_s"]) if fitting else None


def table(rows: list[dict], microbatches: list[int]) -> str:
    """Iteration time (ms) by schedule (lines) and micro-batches (columns):
    "-" where the count does not run, "!" where a device runs out of memory,
    "*" on the fastest that fits."""
    best = fastest(rows)
    cells: dict[str, dict[int, str]] = {}
    for row in rows:
        mark = "*" if row is best else ("!" if not row["all_fit"] else " ")
        cells.setdefault(row["schedule"], {})[row["microbatches"]] = \
            f"{row['iteration_time_s'] * 1e3:.2f}{mark}"
    lines = ["schedule          " + "".join(f"{count:>9} " for count in microbatches)]
    for schedule, by_count in cells.items():
        lines.append(f"{schedule:<18}" + "".join(f"{by_count.get(count, '-'):>10}"
                                                 for count in microbatches))
    return "\n".join(line.rstrip() for line in lines)


def counts(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", nargs="?", type=pathlib.Path,
                        help=f"a project file (default: the shipped {EXAMPLE})")
    parser.add_argument("-s", "--schedules",
                        help="comma-separated schedules (default: every one that micro-batches)")
    parser.add_argument("-m", "--microbatches", type=counts, default=[2, 3, 4, 5, 6, 8, 10, 12],
                        help="comma-separated micro-batch counts (default: 2,3,4,5,6,8,10,12)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    options = parser.parse_args(argv)

    path = options.project or default_project()
    try:
        project = pipewright.load(path)
    except (pipewright.ProjectError, OSError) as error:
        sys.exit(f"sweep.py: {error}")
    if options.schedules:
        schedules = [name.strip() for name in options.schedules.split(",") if name.strip()]
    else:
        schedules = [s["name"] for s in pipewright.schedules() if s["microbatching"]]

    start = time.perf_counter()
    rows, skipped = sweep(project, schedules, options.microbatches)
    elapsed = time.perf_counter() - start

    if options.json:
        json.dump({"project": str(path), "rows": rows, "skipped": skipped}, sys.stdout, indent=2)
        print()
        return 0 if rows else 1
    print(f"{project.model.name} ({path}): {len(rows)} layouts simulated in "
          f"{elapsed * 1e3:.1f} ms")
    if not rows:
        print("no schedule and micro-batch count runs on this project")
    else:
        print("iteration time (ms) by schedule and micro-batches; - does not run, "
              "! does not fit, * fastest")
        print()
        print(table(rows, options.microbatches))
        print()
        best = fastest(rows)
        if best:
            print(f"fastest: {best['schedule']} with {best['microbatches']} micro-batches, "
                  f"{best['iteration_time_s'] * 1e3:.2f} ms, bubble {best['bubble'] * 100:.1f} %, "
                  f"{best['throughput']:,.0f} samples/s")
        else:
            print("fastest: none fits in memory")
    for why in skipped.values():
        print(f"skipped: {why}")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
