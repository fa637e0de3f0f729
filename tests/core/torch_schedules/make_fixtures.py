"""Writes the CSV files torch.distributed.pipelining's _dump_csv writes for
the schedules Pipewright also generates (looped BFS, interleaved zero bubble,
ZB-V, DualPipeV), as test fixtures.

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
    ("dualpipev", schedules.ScheduleDualPipeV, 2, 2, 4),
    ("dualpipev", schedules.ScheduleDualPipeV, 3, 2, 7),
    ("dualpipev", schedules.ScheduleDualPipeV, 4, 2, 10),
]


def stage_rank(name, p, v):
    if name in ("zbv", "dualpipev"):  # a V: down the ranks and back
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


# What _PipelineScheduleRuntime._prepare_schedule_with_comms runs on a
# compute-only list (torch 2.15), written as _dump_csv(format="compute_comms")
# would write it: per rank, UNSHARD/RESHARD (FSDP, at most three stages
# gathered) and REDUCE_GRAD with its WAIT_REDUCE_GRAD; then the sends and
# receives; then a WAIT_SEND_F/WAIT_SEND_B for every send.
#   SCHEDULE-...-ddp.csv      without UNSHARD/RESHARD (gradients averaged only)
#   SCHEDULE-...-runtime.csv  with them, as the runtime lowers every schedule
RUNTIME_CASES = [
    ("1f1b", schedules.Schedule1F1B, 4, 1, 6),
    ("interleaved-zb", schedules.ScheduleInterleavedZeroBubble, 2, 2, 4),
    ("zbv", schedules.ScheduleZBVZeroBubble, 4, 2, 8),
    ("dualpipev", schedules.ScheduleDualPipeV, 4, 2, 10),
]


class OneFOneB:
    """Schedule1F1B runs its steps without an action list (its
    _get_pipeline_order only draws them, and skips the last rank's first
    forward in torch 2.15), so its compute-only list is written here as its
    step loop runs: p-1-rank warm-up forwards, one forward and one backward
    until the forwards run out, then the remaining backwards."""

    def __init__(self, ranks, microbatches):
        F, B = schedules._ComputationType.FORWARD, schedules._ComputationType.FULL_BACKWARD
        self.pipeline_order = {}
        for rank in range(ranks):
            warmup = min(ranks - 1 - rank, microbatches)
            acts = [schedules._Action(rank, F, mb) for mb in range(warmup)]
            for mb in range(microbatches - warmup):
                acts += [schedules._Action(rank, F, warmup + mb), schedules._Action(rank, B, mb)]
            acts += [schedules._Action(rank, B, mb)
                     for mb in range(microbatches - warmup, microbatches)]
            self.pipeline_order[rank] = acts


def single_stage_order(cls, ranks, microbatches):
    return OneFOneB(ranks, microbatches)


def lower_for_runtime(s, name, p, v, m, fsdp):
    per_rank = {}
    for rank, acts in s.pipeline_order.items():
        acts = [a for a in acts if a is not None]
        if fsdp:
            acts = schedules._add_unshard_reshard(acts, 3, unshard_lookahead=3)
        per_rank[rank] = schedules._add_reduce_grad(acts, m)
    lowered = schedules._add_send_recv(per_rank, stage_rank(name, p, v), p * v)
    return schedules._add_wait_send(lowered)


for name, cls, p, v, m in CASES:
    write(HERE / f"{name}-p{p}-v{v}-m{m}-ddp.csv",
          lower_for_runtime(order(cls, p, v, m), name, p, v, m, fsdp=False))

for name, cls, p, v, m in RUNTIME_CASES:
    s = single_stage_order(cls, p, m) if v == 1 else order(cls, p, v, m)
    stem = f"{name}-p{p}-v{v}-m{m}"
    if v == 1:
        write(HERE / f"{stem}.csv", {r: [a for a in acts if a is not None]
                                     for r, acts in s.pipeline_order.items()})
    write(HERE / f"{stem}-ddp.csv", lower_for_runtime(s, name, p, v, m, fsdp=False))
    write(HERE / f"{stem}-runtime.csv", lower_for_runtime(s, name, p, v, m, fsdp=True))
