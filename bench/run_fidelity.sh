#!/usr/bin/env bash
# Fidelity of the simulation (issue 3, "Speed" item 4): profile the project,
# simulate it with the profile, run it for real, and compare the iteration
# times, for naive, gpipe and 1f1b. Builds nothing.
#
#   PIPEWRIGHT=build/release/cli/pipewright bench/run_fidelity.sh
#
# Settings (environment):
#   PIPEWRIGHT  the pipewright binary (default build/release/cli/pipewright)
#   PROJECT     the project (default assets/examples/mlp-2048-cpu.json)
#   SCHEDULES   schedules to compare (default "naive gpipe 1f1b")
#   THREADS     Torch threads per rank, in the profile and the runs (default 1)
#   ROUNDS      profile -> simulate -> run rounds; medians are reported (default 3)
#   STEPS       training steps per run (default 6), WARMUP of them left out (default 1)
#   REPEATS     timed repetitions per layer in the profile (default 10)
#   COSTS       what prices the simulation: "profile" (`profile` of this
#               project, the default) or "calibration" (`calibrate` of this
#               machine's CPU with THREADS threads, the kernel model for any
#               project; links then come from the project file)
#   OUT         folder for every file written (default a new folder under /tmp)
set -euo pipefail

PIPEWRIGHT=${PIPEWRIGHT:-build/release/cli/pipewright}
PROJECT=${PROJECT:-assets/examples/mlp-2048-cpu.json}
SCHEDULES=${SCHEDULES:-naive gpipe 1f1b}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-3}
STEPS=${STEPS:-6}
WARMUP=${WARMUP:-1}
REPEATS=${REPEATS:-10}
COSTS=${COSTS:-profile}
OUT=${OUT:-$(mktemp -d /tmp/pipewright-fidelity.XXXXXX)}

if [[ ! -x "$PIPEWRIGHT" ]]; then
    echo "run_fidelity.sh: no pipewright binary at $PIPEWRIGHT (set PIPEWRIGHT)" >&2
    exit 1
fi
if [[ ! -f "$PROJECT" ]]; then
    echo "run_fidelity.sh: no project at $PROJECT (set PROJECT)" >&2
    exit 1
fi
for tool in jq python3; do
    command -v "$tool" >/dev/null || { echo "run_fidelity.sh: needs $tool" >&2; exit 1; }
done
mkdir -p "$OUT"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "# $PIPEWRIGHT, $PROJECT, $THREADS thread(s) per rank, $ROUNDS rounds, output in $OUT" >&2

# Each round measures everything again, side by side: the profile and the
# runs it predicts see the same machine load.
for round in $(seq 1 "$ROUNDS"); do
    dir="$OUT/round-$round"
    mkdir -p "$dir"
    if [[ "$COSTS" == calibration ]]; then
        echo "# round $round: calibrate this machine's CPU" >&2
        "$PIPEWRIGHT" calibrate --device cpu --threads "$THREADS" --out "$dir/calibration.json" \
            >"$dir/calibration.txt" 2>"$dir/calibration.log"
    fi
    for schedule in $SCHEDULES; do
        if [[ "$COSTS" == calibration ]]; then
            costs=(--calibration "$dir/calibration.json")
        else
            # Profile at the micro-batch size this schedule runs with (naive
            # runs one micro-batch of the whole batch): layer times do not
            # scale linearly with it. One profile per size and round.
            m=$("$PIPEWRIGHT" simulate "$PROJECT" --schedule "$schedule" --json | jq .microbatches)
            profile="$dir/profile-m$m.json"
            if [[ ! -f "$profile" ]]; then
                echo "# round $round: profile, $m micro-batches" >&2
                "$PIPEWRIGHT" profile "$PROJECT" --threads "$THREADS" --repeats "$REPEATS" -m "$m" \
                    --out "$profile" >"$dir/profile-m$m.txt" 2>"$dir/profile-m$m.log"
            fi
            costs=(--profile "$profile")
        fi
        echo "# round $round: $schedule: simulate, run, compare" >&2
        "$PIPEWRIGHT" simulate "$PROJECT" --schedule "$schedule" "${costs[@]}" \
            --timeline "$dir/$schedule-sim.json" --json >"$dir/$schedule-sim-summary.json"
        "$PIPEWRIGHT" run "$PROJECT" --schedule "$schedule" --threads-per-rank "$THREADS" \
            --steps "$STEPS" --warmup "$WARMUP" --out "$dir/$schedule-run" --json \
            >"$dir/$schedule-run-summary.json" 2>"$dir/$schedule-run.log"
        "$PIPEWRIGHT" compare "$dir/$schedule-sim.json" "$dir/$schedule-run" --json \
            >"$dir/$schedule-compare.json"
    done
done

# The table: per schedule, the medians over the rounds of the simulated and
# the measured iteration time (run --json: median over the steps after the
# warm-up, optimizer step included), and of compare's per-kind medians.
python3 - "$OUT" "$ROUNDS" $SCHEDULES <<'EOF'
import json, statistics, sys
out, rounds, schedules = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def load(path):
    with open(path) as f:
        return json.load(f)

def ms(s):
    return f"{s * 1e3:8.1f} ms"

# Actions of tens of microseconds (a send, a receive whose tensor had
# come) read 0.0 ms in milliseconds: a row under a millisecond is in µs.
def durations(a, b):
    if min(a, b) >= 1e-3:
        return f"{ms(a)} {ms(b)}"
    return f"{a * 1e6:8.1f} µs {b * 1e6:8.1f} µs"

print(f"{'schedule':10} {'simulated':>11} {'measured':>11} {'error':>8}   per round (error %)")
kinds = {}
for s in schedules:
    sim, real, errors = [], [], []
    for r in range(1, rounds + 1):
        d = f"{out}/round-{r}"
        t_sim = load(f"{d}/{s}-sim-summary.json")["iteration_time_s"]
        t_real = load(f"{d}/{s}-run-summary.json")["iteration_time_s"]
        sim.append(t_sim)
        real.append(t_real)
        errors.append(100 * (t_sim - t_real) / t_real)
        for row in load(f"{d}/{s}-compare.json")["rows"]:
            if row["what"].startswith("median "):
                kinds.setdefault((s, row["what"][7:]), []).append(row)
    m_sim, m_real = statistics.median(sim), statistics.median(real)
    print(f"{s:10} {ms(m_sim)} {ms(m_real)} {100 * (m_sim - m_real) / m_real:+7.1f}%   "
          + " ".join(f"{e:+.1f}" for e in errors))

print()
print("per action kind, median duration (pipewright compare), medians over the rounds:")
print(f"{'schedule':10} {'kind':8} {'simulated':>11} {'measured':>11} {'error':>8}")
for (s, kind), rows in sorted(kinds.items()):
    m_sim = statistics.median(r["simulated_s"] for r in rows)
    m_real = statistics.median(r["measured_s"] for r in rows)
    err = f"{100 * (m_sim - m_real) / m_real:+7.1f}%" if m_real > 0 else "      -"
    print(f"{s:10} {kind:8} {durations(m_sim, m_real)} {err}")
EOF
