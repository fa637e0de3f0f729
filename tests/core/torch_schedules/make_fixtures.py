"""Writes the CSV files torch.distributed.pipelining's _dump_csv writes for
the schedules Pipewright also generates (looped BFS, interleaved zero bubble,
ZB-V), as test fixtures.

Run with a PyTorch that has the schedule classes (2.4 or later; Debian 12's
python3-torch 1.13 has none of them), for example the environment that
scripts/check-torch-upstream.sh installs:

    ~/.cache/pipewright/torch-upstream/bin/python tests/core/torch_schedules/make_fixtures.py

Each compute-only list is written as SCHEDULE-pP-vV-mM.csv (P ranks, V
stages per rank, M micro-batches), and lowered by torch's _add_send_recv
(what _PipelineScheduleRuntime runs) as SCHEDULE-pP-vV-mM-comms.csv. Only the schedule's own arithmetic runs: no process group is
made, so the constructors are bypassed and the attributes they would set are
set directly.
"""
import csv
import pathlib

import torch
from torch.distributed.pipelining import schedules

HERE = pathlib.Path(__file__).resolve().parent


def order(cls, ranks, stages_per_rank, microbatches):
    s = object.__new__(cls)
    s.pp_group_size = ranks
    s.n_local_stages = stages_per_rank
    s._stages = [None] * stages_per_rank
    s._n_microbatches = microbatches
    s.number_of_rounds = max(1, microbatches // ranks)
    s.microbatches_per_round = microbatches // s.number_of_rounds
    s.num_stages = ranks * stages_per_rank
    s.pipeline_order = {r: s._calculate_single_rank_operations(r) for r in range(ranks)}
    return s


CASES = [
    ("looped-bfs", schedules.ScheduleLoopedBFS, 2, 2, 3),
    ("looped-bfs", schedules.ScheduleLoopedBFS, 4, 3, 5),
    ("interleaved-zb", schedules.ScheduleInterleavedZeroBubble, 2, 2, 4),
    ("interleaved-zb", schedules.ScheduleInterleavedZeroBubble, 3, 2, 5),
    ("interleaved-zb", schedules.ScheduleInterleavedZeroBubble, 4, 2, 8),
    ("interleaved-zb", schedules.ScheduleInterleavedZeroBubble, 4, 3, 12),
    ("zbv", schedules.ScheduleZBVZeroBubble, 2, 2, 4),
    ("zbv", schedules.ScheduleZBVZeroBubble, 4, 2, 8),
    ("zbv", schedules.ScheduleZBVZeroBubble, 4, 2, 5),
]


def stage_rank(name, p, v):
    if name == "zbv":  # a V: down the ranks and back
        return lambda stage: stage if stage < p else 2 * p - 1 - stage
    return lambda stage: stage % p

def write(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        for rank in sorted(rows):
            writer.writerow(rows[rank])
    print(f"{path.name}  (torch {torch.__version__})")


for name, cls, p, v, m in CASES:
    s = order(cls, p, v, m)
    stem = f"{name}-p{p}-v{v}-m{m}"
    s._dump_csv(str(HERE / f"{stem}.csv"), format="compute_only")
    print(f"{stem}.csv  (torch {torch.__version__})")
    compute = {r: [a for a in acts if a is not None] for r, acts in s.pipeline_order.items()}
    lowered = schedules._add_send_recv(compute, stage_rank(name, p, v), p * v)
    write(HERE / f"{stem}-comms.csv", lowered)
