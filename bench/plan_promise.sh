#!/usr/bin/env bash
# Does a plan keep its promise (issue 30, part 5)? For each project: profile
# it on this machine (the default sizes: 1, the powers of 4 and the
# project's), plan with that profile, then run the input layout and the
# planned one in rotation. A plan keeps its promise when its real run is no
# slower than the input's and within 25 % of the plan's estimate. When one
# layout's runs spread more than 25 % apart, the verdict says the machine
# was too noisy to trust it.
#
#   PIPEWRIGHT=build/ci/cli/pipewright bench/plan_promise.sh
#
# Settings (environment):
#   PIPEWRIGHT  the pipewright binary (default build/ci/cli/pipewright)
#   PROJECTS    projects (default assets/examples/mlp-cpu.json and mlp-2048-cpu.json)
#   ROUNDS      runs of each layout, in rotation; medians are reported (default 3)
#   STEPS       training steps per run (default 8), WARMUP of them left out (default 2)
#   REPEATS     timed repetitions per layer in the profile (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/run_common.sh

PROJECTS=${PROJECTS:-assets/examples/mlp-cpu.json assets/examples/mlp-2048-cpu.json}
rounds=${ROUNDS:-3}
steps=${STEPS:-8}
warmup=${WARMUP:-2}
repeats=${REPEATS:-10}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
printf '%-14s %-34s %10s %10s %10s %8s %9s  %s\n' project plan estimate "plan run" \
    "input run" "run/est" "vs input" verdict
scratch=$work
for project in $PROJECTS; do
    name=$(basename "$project" .json)
    # run_rounds writes under $work: a folder per project.
    work=$scratch/$name
    mkdir -p "$work"
    cp "$project" "$work/input.json"
    # One thread per rank, as the runs below.
    "$pipewright" profile "$work/input.json" --threads 1 --repeats "$repeats" \
        --out "$work/$name-profile.json" > /dev/null 2> "$work/$name-profile.log"
    "$pipewright" plan "$work/input.json" --profile "$work/$name-profile.json" \
        --apply "$work/plan.json" --json > "$work/$name-plan.json" 2> "$work/$name-plan.log"
    estimate=$(jq '.iteration_time_s' "$work/$name-plan.json")
    layout=$(jq -r '"\(.schedule) \(.placement | length) stages, \(.microbatches)×\(.microbatch_size)"' \
        "$work/$name-plan.json")
    if grep -q warning "$work/$name-plan.log"; then
        sed 's/^/# /' "$work/$name-plan.log" >&2
    fi
    unset times
    declare -A times
    variants=(input plan)
    run_rounds
    plan_run=$(echo "${times[plan]}" | median)
    input_run=$(echo "${times[input]}" | median)
    python3 - "$name" "$layout" "$estimate" "$plan_run" "$input_run" \
        "${times[plan]}" "${times[input]}" <<'EOF'
import sys
name, layout, est, plan, inp, plan_all, inp_all = sys.argv[1:8]
est, plan, inp = float(est), float(plan), float(inp)
ratio = plan / est
kept = plan <= inp * 1.0 and abs(ratio - 1) <= 0.25
# One layout's runs that spread wider than the bar itself (a shared host's
# load on one core slows a whole run) cannot judge it either way: said so,
# beside the verdict the medians give.
runs = {k: [float(t) for t in v.split()] for k, v in (("plan", plan_all), ("input", inp_all))}
spread = max(max(v) / min(v) - 1 for v in runs.values() if v and min(v) > 0)
verdict = "kept" if kept else "BROKEN"
if spread > 0.25:
    verdict += f" (noisy: one layout's runs {100 * spread:.0f} % apart)"
ms = lambda s: f"{s * 1e3:7.2f} ms"
print(f"{name:14} {layout:34} {ms(est)} {ms(plan)} {ms(inp)} {ratio:7.2f}× "
      f"{100 * (plan / inp - 1):+8.1f}%  {verdict}")
print(f"#   runs (s): plan {plan_all.strip()} | input {inp_all.strip()}", file=sys.stderr)
EOF
done
