"""Hands schedules Pipewright wrote to torch.distributed.pipelining's runtime
and checks that torch trains with them as one process would.

    PYTHON scripts/torch_handoff_check.py PIPEWRIGHT_PROGRAM

For each project below, `pipewright simulate --export-csv --csv-format F`
writes the schedule (F = compute-only, then compute-comms); torch's
_PipelineScheduleRuntime loads it with _load_csv(path, format=F) and runs
one step on CPU ranks (Gloo), one process per rank. The model is a stack of
linear layers, one per stage (the schedule names stages and micro-batches,
not layers); every stage's gradients must equal those of the same model run
whole on the whole batch in one process. scripts/check-torch-upstream.sh
runs it with the torch it installs (these are torch's private helpers,
absent from Debian's 1.13).
"""
import os
import pathlib
import subprocess
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.pipelining import PipelineStage
from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

ROOT = pathlib.Path(__file__).resolve().parent.parent
# (project, ranks, stages, micro-batches): the schedule's shape, which the
# model here copies.
PROJECTS = [
    ("assets/examples/seven-layers-two-nodes.json", 4, 4, 8),  # 1f1b
    ("docs/examples/four-stages-interleaved-zb.json", 4, 8, 8),  # looped
    ("docs/examples/four-stages-zbv.json", 4, 8, 8),  # a V
    ("docs/examples/four-stages-dualpipev.json", 4, 8, 8),  # OVERLAP_F_B, B mixed with I/W
    ("docs/examples/four-stages-zb-auto.json", 4, 4, 8),  # built for the costs
]
WIDTH, BATCH = 8, 16


def model(stages):
    torch.manual_seed(0)
    return torch.nn.Sequential(*[torch.nn.Linear(WIDTH, WIDTH) for _ in range(stages)])


def data():
    g = torch.Generator().manual_seed(1)
    return torch.randn(BATCH, WIDTH, generator=g), torch.randn(BATCH, WIDTH, generator=g)


def rank_main(rank, ranks, stages, microbatches, csv, fmt, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    try:
        run_rank(rank, stages, microbatches, csv, fmt, out)
    except BaseException:
        # The other ranks only see a closed connection; say why this one stopped.
        import traceback
        sys.stderr.write(f"rank {rank}:\n{traceback.format_exc()}")
        raise
    finally:
        dist.destroy_process_group()


def run_rank(rank, stages, microbatches, csv, fmt, out):
    if True:
        whole = model(stages)
        # The stages this rank runs, read from the file's rows.
        with open(csv) as f:
            row = f.read().splitlines()[rank]
        mine = sorted({int(c.split("F")[0]) for c in row.split(",") if c[:1].isdigit()
                       and c.lstrip("0123456789").startswith("F")})
        pipeline_stages = [
            PipelineStage(whole[s], s, stages, torch.device("cpu")) for s in mine
        ]
        schedule = _PipelineScheduleRuntime(
            pipeline_stages, n_microbatches=microbatches,
            loss_fn=torch.nn.functional.mse_loss)
        schedule._load_csv(csv, format=fmt)
        x, y = data()
        args = (x,) if 0 in mine else ()
        kwargs = {"target": y} if stages - 1 in mine else {}
        schedule.step(*args, **kwargs)
        grads = {s: [p.grad.clone() for p in whole[s].parameters()] for s in mine}
        torch.save(grads, f"{out}/rank{rank}.pt")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check(program, project, ranks, stages, microbatches, fmt, tmp):
    csv = pathlib.Path(tmp) / f"{pathlib.Path(project).stem}-{fmt}.csv"
    subprocess.run([program, "simulate", str(ROOT / project), "--export-csv", str(csv),
                    "--csv-format", fmt.replace("_", "-")], check=True,
                   stdout=subprocess.DEVNULL)
    out = pathlib.Path(tmp) / f"grads-{csv.stem}"
    out.mkdir()
    mp.spawn(rank_main, args=(ranks, stages, microbatches, str(csv), fmt, free_port(), str(out)),
             nprocs=ranks, join=True)
    reference = model(stages)
    x, y = data()
    torch.nn.functional.mse_loss(reference(x), y).backward()
    checked = 0
    for rank in range(ranks):
        for s, grads in torch.load(out / f"rank{rank}.pt").items():
            for got, want in zip(grads, (p.grad for p in reference[s].parameters())):
                if not torch.allclose(got, want, atol=1e-6, rtol=1e-5):
                    raise SystemExit(f"{project} ({fmt}): stage {s}'s gradients differ from "
                                     f"one process's by {(got - want).abs().max():.3g}")
                checked += 1
    if checked != 2 * stages:
        raise SystemExit(f"{project} ({fmt}): {checked} gradients came back, not {2 * stages}")
    print(f"torch {torch.__version__} ran {project} from --csv-format "
          f"{fmt.replace('_', '-')}: {ranks} ranks, {stages} stages, {microbatches} "
          "micro-batches; gradients equal one process's")


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: torch_handoff_check.py PIPEWRIGHT_PROGRAM")
    with tempfile.TemporaryDirectory() as tmp:
        for project in PROJECTS:
            for fmt in ("compute_only", "compute_comms"):
                check(sys.argv[1], *project, fmt, tmp)


if __name__ == "__main__":
    main()
