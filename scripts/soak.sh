#!/usr/bin/env bash
# Load and leak check: 16 ranks for 2,000 steps, then 2 ranks for 100,000 steps, sampling the
# resident memory (VmRSS from /proc) of the controller and of every worker four times a second
# (the short run's 20,000 steps of 2 ranks are over in a few seconds).
#
#   scripts/soak.sh [ringlab binary, default build/app/ringlab]
#
# For each run it prints the steps done, each process's RSS after warm-up and at the end (flat =
# within RINGLAB_SOAK_FLAT_MB, default 5 MB), and whether every event arrived: each rank's step
# count in the run's --report and --metrics must equal the expected steps.
# Exits 1 if a run fails, a step is missing or a process's memory is not flat.
#
# Environment: RINGLAB_SOAK_FLAT_MB (default 5), RINGLAB_SOAK_ONLY=16|2 (one of the two runs),
# RINGLAB_SOAK_STEPS_16 / RINGLAB_SOAK_STEPS_2 (to shorten the runs: multiples of 20 / 100),
# RINGLAB_SOAK_DIR (where the samples and reports go; default a new folder under /tmp).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/app/ringlab}")
[[ -x "$bin" ]] || { echo "no ringlab binary at $bin (build first, or pass its path)" >&2; exit 2; }
flat_mb=${RINGLAB_SOAK_FLAT_MB:-5}
steps16=${RINGLAB_SOAK_STEPS_16:-2000}
steps2=${RINGLAB_SOAK_STEPS_2:-100000}
out=${RINGLAB_SOAK_DIR:-$(mktemp -d /tmp/ringlab-soak-XXXXXX)}
mkdir -p "$out"
echo "soak: $bin, results in $out"

# The sampler runs ringlab, walks its process tree every 250 ms and keeps VmRSS per process.
cat > "$out/sample.py" <<'PY'
import csv, json, os, subprocess, sys, time

def children(pid):
    try:
        kids = []
        for task in os.listdir(f"/proc/{pid}/task"):
            kids += [int(c) for c in open(f"/proc/{pid}/task/{task}/children").read().split()]
        return kids
    except OSError:
        return []

def rss_kb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None

def role(pid):
    try:
        args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    except OSError:
        return None
    if b"worker" in args:
        for kv in env:
            if kv.startswith(b"RANK="):
                return f"rank {int(kv[5:])}"
        return "worker"
    return None

out_dir, label, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t0 = time.monotonic()
proc = subprocess.Popen(cmd, stdout=open(f"{out_dir}/{label}.stdout", "w"), stderr=subprocess.STDOUT)
samples = []  # (seconds, name, rss_kb)
names = {proc.pid: "controller"}
while proc.poll() is None:
    now = time.monotonic() - t0
    for pid in [proc.pid] + children(proc.pid):
        if pid not in names:
            r = role(pid)
            if r:
                names[pid] = r
        if pid in names:
            kb = rss_kb(pid)
            # 0 kB: caught between fork and exec, or tearing down; says nothing about growth
            # (it once made a 2-sample controller look "0.0 -> 12.9 MB, NOT FLAT").
            if kb:
                samples.append((now, names[pid], kb))
    time.sleep(0.25)
elapsed = time.monotonic() - t0
with open(f"{out_dir}/{label}.rss.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["seconds", "process", "rss_kb"])
    w.writerows(samples)
json.dump({"rc": proc.returncode, "seconds": elapsed}, open(f"{out_dir}/{label}.exit.json", "w"))
PY

# The summary: memory after warm-up (the sample at a fifth of each process's sampled life, so
# start-up allocations are over) against the last sample, and the step counts.
cat > "$out/summary.py" <<'PY'
import csv, json, sys
from collections import defaultdict
out_dir, label, world, expected, flat_mb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
ok = True
exit_info = json.load(open(f"{out_dir}/{label}.exit.json"))
print(f"  exit code {exit_info['rc']} after {exit_info['seconds']:.0f} s")
if exit_info["rc"] != 0:
    ok = False
    print("  the run FAILED:")
    print("    " + open(f"{out_dir}/{label}.stdout").read()[-2000:].replace("\n", "\n    "))

report = json.load(open(f"{out_dir}/{label}.report.json"))
losses = report.get("step_loss", [])
per_rank_report = [len(l) for l in losses]
per_rank_metrics = defaultdict(int)
with open(f"{out_dir}/{label}.metrics.csv") as f:
    for row in csv.DictReader(f):
        per_rank_metrics[int(row["rank"])] += 1
print(f"  steps done (report 'steps'): {report.get('steps')} of {expected} expected")
print(f"  StepEnd events received per rank (report step_loss): min {min(per_rank_report, default=0)}, "
      f"max {max(per_rank_report, default=0)} over {len(per_rank_report)} ranks")
print(f"  metrics CSV rows per rank: min {min(per_rank_metrics.values(), default=0)}, "
      f"max {max(per_rank_metrics.values(), default=0)} over {len(per_rank_metrics)} ranks")
lost = [r for r in range(world) if r >= len(per_rank_report) or per_rank_report[r] != expected
        or per_rank_metrics.get(r, 0) != expected]
if report.get("steps") != expected or lost:
    ok = False
    print(f"  LOST OR MISSING STEPS on ranks {lost}")
else:
    print(f"  no event lost: every rank reported exactly {expected} steps")

series = defaultdict(list)
with open(f"{out_dir}/{label}.rss.csv") as f:
    for row in csv.DictReader(f):
        series[row["process"]].append((float(row["seconds"]), int(row["rss_kb"])))
def order(name):
    return (0, 0) if name == "controller" else (1, int(name.split()[-1]) if name.split()[-1].isdigit() else 0)
# Training ends when the last worker sample is taken; what the controller does after that (the
# report, the trace and metrics exports) is shown as its peak, not judged as growth.
training_end = max((t for name, s in series.items() if name != "controller" for t, _ in s), default=None)
if training_end is not None and "controller" in series:
    during = [x for x in series["controller"] if x[0] <= training_end]
    after = [x for x in series["controller"] if x[0] > training_end]
    if len(during) >= 3:
        series["controller"] = during
        if after:
            print(f"  controller after training (report and exports): peak {max(kb for _, kb in after) / 1024:.1f} MB")
print(f"  RSS (MB): process, after warm-up -> end of training (peak), {len(series)} processes, "
      f"flat = within {flat_mb} MB")
worst = 0.0
for name in sorted(series, key=order):
    s = series[name]
    if len(s) < 3:
        print(f"    {name:<11} only {len(s)} sample(s): too short to judge")
        continue
    warm = s[len(s) // 5][1] / 1024
    end = s[-1][1] / 1024
    peak = max(kb for _, kb in s) / 1024
    growth = end - warm
    worst = max(worst, growth)
    flag = "" if growth <= flat_mb else "  NOT FLAT"
    if growth > flat_mb:
        ok = False
    print(f"    {name:<11} {warm:8.1f} -> {end:8.1f} ({peak:8.1f}){flag}")
print(f"  largest growth after warm-up: {worst:.1f} MB")
# The controller folds events into the result and the metrics rows as they arrive and spools what
# grows with the run (shards, losses, rows) to disk, so this should be 0: a constant per rank-step
# would mean something keeps events; growth that scales with bytes, a leak in the transport.
if "controller" in series and len(series["controller"]) >= 3:
    s = series["controller"]
    grown_kb = s[-1][1] - s[len(s) // 5][1]
    rank_steps = expected * world * (1 - 1 / 5)  # roughly the steps after the warm-up sample
    print(f"  controller growth per rank-step after warm-up: {grown_kb * 1024 / rank_steps:.0f} bytes")
sys.exit(0 if ok else 1)
PY

soak_run() {  # soak_run LABEL WORLD SAMPLES BATCH EPOCHS EXPECTED_STEPS
  local label=$1 world=$2 samples=$3 batch=$4 epochs=$5 expected=$6
  echo "=== $label: $world ranks, $samples samples, batch $batch, $epochs epochs = $expected steps per rank"
  python3 "$out/sample.py" "$out" "$label" "$bin" run -q -n "$world" --samples "$samples" --batch-size "$batch" \
    --epochs "$epochs" --trace-level steps --timeout 120 \
    --report "$out/$label.report.json" --metrics "$out/$label.metrics.csv"
  python3 "$out/summary.py" "$out" "$label" "$world" "$expected" "$flat_mb"
}

status=0
# 16 ranks: 160 samples per rank in batches of 8 = 20 steps per epoch.
if [[ ${RINGLAB_SOAK_ONLY:-16} == 16 ]]; then
  soak_run ranks16 16 2560 8 $((steps16 / 20)) "$steps16" || status=1
fi
# 2 ranks: 3,200 samples per rank in batches of 32 = 100 steps per epoch.
if [[ ${RINGLAB_SOAK_ONLY:-2} == 2 ]]; then
  soak_run ranks2 2 6400 32 $((steps2 / 100)) "$steps2" || status=1
fi
echo "=== soak: $([[ $status -eq 0 ]] && echo PASS || echo FAIL) (files in $out)"
exit $status
