#!/usr/bin/env bash
# `ringlab run` end to end as a user sees it: the seed's printed run, the JSON report's fields,
# and clear one-line errors with a non-zero exit for bad input.
set -uo pipefail
ringlab=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# 1. The seed's run, word for word where the seed prints numbers.
out=$("$ringlab" run --report "$work/r.json" 2>&1) || bad "seed run exited non-zero"
for line in "world_size             : 1" "batches per epoch      : 8 (256 samples / 32)" \
            "[99, 70, 55, 138, 66, 19, 48, 54]" "all-reduce SUM (rank 0): [1.0, 2.0, 3.0]" \
            "epoch 1 done, MSE over the whole dataset: 0.900974" \
            "epoch 2 done, MSE over the whole dataset: 0.136688" \
            "epoch 3 done, MSE over the whole dataset: 0.065360" \
            "epoch 4 done, MSE over the whole dataset: 0.062745" "destroy_process_group  : done"; do
  grep -qF -- "$line" <<<"$out" && ok "prints: $line" || bad "missing: $line"
done

# How fast it went: said on stderr at the end of every run that ends well (stdout stays the
# script's lines); a newcomer found no step time anywhere without --report.
# A step far slower than the rest (a busy machine) is named after it: "; step 0 alone took ...".
grep -qE "^ringlab run: the run ended well: 32 steps on 1 rank, [0-9]+ µs per step \(rank 0\)(; step [0-9]+ alone took [0-9.]+ (µs|ms|s) \(the others [0-9]+ µs each\))?$" <<<"$out" &&
  ok "says its step time at the end" || bad "no step time at the end: $(tail -2 <<<"$out")"

# Where a scenario's name is looked up. A copy of the binary away from the sources still finds the
# scenarios of the sources it was built from. RINGLAB_SCENARIO_DIR is searched first, then
# ringlab's own folders: a name there hides ringlab's, and ringlab's default scenario is still found
# (with the variable set, the app did not start: its default was looked for in that folder alone).
mkdir -p "$work/bin" "$work/mine" "$work/empty"
mine=$(cd "$work/mine" && pwd -P)  # as the refusal names it
cp "$ringlab" "$work/bin/ringlab"
out=$(cd "$work" && env -u RINGLAB_SCENARIO_DIR -u RINGLAB_SOURCE_DIR "$work/bin/ringlab" run -q --scenario four-ranks-gloo --epochs 0 --report "$work/found.json" 2>&1) &&
  grep -q '"world_size": 4' "$work/found.json" && ok "a copied binary finds the scenarios of its sources" ||
  bad "a copied binary did not find four-ranks-gloo: $out"
printf '{"title": {"en": "mine"}, "description": {"en": "mine"}, "job": {"world_size": 3, "epochs": 0}}\n' > "$work/mine/custom.json"
out=$(RINGLAB_SCENARIO_DIR="$work/mine" "$ringlab" run -q --scenario custom --report "$work/custom.json" 2>&1) &&
  grep -q '"world_size": 3' "$work/custom.json" && ok "RINGLAB_SCENARIO_DIR: its scenario found by name" ||
  bad "RINGLAB_SCENARIO_DIR: custom not found: $out"
out=$(RINGLAB_SCENARIO_DIR="$work/empty" "$ringlab" run -q --scenario four-ranks-gloo --epochs 0 --report "$work/builtin.json" 2>&1) &&
  grep -q '"world_size": 4' "$work/builtin.json" && ok "RINGLAB_SCENARIO_DIR: ringlab's own scenarios still found after it" ||
  bad "RINGLAB_SCENARIO_DIR: four-ranks-gloo not found after an empty folder: $out"
cp "$work/mine/custom.json" "$work/mine/four-ranks-gloo.json"
out=$(RINGLAB_SCENARIO_DIR="$work/mine" "$ringlab" run -q --scenario four-ranks-gloo --report "$work/shadow.json" 2>&1) &&
  grep -q '"world_size": 3' "$work/shadow.json" && ok "RINGLAB_SCENARIO_DIR: a name there hides ringlab's own" ||
  bad "RINGLAB_SCENARIO_DIR: its four-ranks-gloo did not win: $out"
out=$(RINGLAB_SCENARIO_DIR="$work/mine" "$ringlab" run -q --scenario no-such 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qE "no scenario named 'no-such' \(known: custom, four-ranks-gloo, .*seed-one-rank.*; in $mine, " <<<"$out" &&
  ok "a name found nowhere is refused, naming every scenario and the folders searched" || bad "unknown name: rc=$rc $out"
out=$(RINGLAB_SCENARIO_DIR="$work/mine/custom.json" "$ringlab" run -q --scenario custom 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "ringlab: error: --scenario custom: RINGLAB_SCENARIO_DIR=$work/mine/custom.json is not a folder" <<<"$out" &&
  ok "RINGLAB_SCENARIO_DIR naming a file is refused as not a folder" || bad "RINGLAB_SCENARIO_DIR a file: rc=$rc $out"
out=$(RINGLAB_SCENARIO_DIR="$work/nowhere" "$ringlab" run -q --scenario custom 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "RINGLAB_SCENARIO_DIR=$work/nowhere does not exist" <<<"$out" &&
  ok "RINGLAB_SCENARIO_DIR naming nothing is refused as not existing" || bad "RINGLAB_SCENARIO_DIR missing: rc=$rc $out"
out=$("$ringlab" run -q --scenario four-ranks-gloo.json 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "the scenario named 'four-ranks-gloo' is given without \".json\": --scenario four-ranks-gloo" <<<"$out" &&
  ok "a scenario's name given with .json is pointed to its name" || bad "name.json: rc=$rc $out"

# A run of no epochs (it starts the workers and connects them, as the tests' backend probes do)
# prints what the script would: len(sampler) from the job, no epoch lines.
out=$("$ringlab" run -n 2 --epochs 0 2>&1) || bad "a run of 0 epochs exited non-zero"
grep -qF "batches per epoch      : 4 (128 samples per rank / 32)" <<<"$out" && ok "0 epochs: batches and samples agree" ||
  bad "0 epochs: $(grep 'batches per epoch' <<<"$out")"
! grep -q "^epoch " <<<"$out" && ok "0 epochs: no epoch lines" || bad "0 epochs printed an epoch line"

# A fault planned past the run's last step would do nothing: the run says so before it trains.
out=$("$ringlab" run -n 2 --epochs 1 --fault kill:1@999999 2>&1) || bad "a run with a fault that never fires exited non-zero"
grep -qF "ringlab run: note: --fault kill:1@999999 never fires: this run's steps are 0 to 3" <<<"$out" &&
  ok "a fault past the last step is noted" || bad "no note for a fault that never fires: $out"
# A sampler that leaves every rank nothing trains no step (as PyTorch's would): said before.
out=$("$ringlab" run -n 4 --samples 3 --drop-last --epochs 2 2>&1) || bad "--samples 3 -n 4 --drop-last exited non-zero"
grep -qF "ringlab run: note: 3 samples over 4 ranks with --drop-last leave each rank no batch: no step trains" <<<"$out" &&
  ok "a sampler that gives no rank a batch is noted" || bad "no note for --samples 3 -n 4 --drop-last: $out"
# The classic bug trains normally: the run says what it showed, and the report's shards show it.
out=$("$ringlab" run -n 2 --epochs 3 --forget-set-epoch --report "$work/fse.json" 2>&1) || bad "--forget-set-epoch exited non-zero"
grep -qF "ringlab run: with --forget-set-epoch every epoch drew epoch 0's order" <<<"$out" &&
  /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["shards"]; assert all(r[0] == r[1] == r[2] for r in s), s' "$work/fse.json" &&
  ok "--forget-set-epoch: said after the run, and every epoch's shards are epoch 0's" || bad "--forget-set-epoch: $out"
# -q prints nothing but errors, and a note is none.
out=$("$ringlab" run -q -n 2 --epochs 1 --fault kill:1@999999 2>&1) || bad "-q: a run with a fault that never fires exited non-zero"
[ -z "$out" ] && ok "-q: the note is not printed" || bad "-q printed: $out"
# A fault another rank must answer, on a world of one: the run trains on unmoved, and says why.
out=$("$ringlab" run -n 1 --epochs 1 --fault skip:0@2 2>&1) || bad "a one-rank run with a skip fault exited non-zero"
grep -qF "ringlab run: note: --fault skip:0@2 shows nothing with one rank" <<<"$out" &&
  ok "a fault that needs another rank, on one rank, is noted" || bad "no note for a skip on one rank: $out"

# --uneven taking every batch a rank has is said before the run (with Join the run still completes).
out=$("$ringlab" run -n 2 --epochs 1 --uneven 1:100 --join 2>&1) || bad "--uneven 1:100 --join exited non-zero: $out"
grep -qF "ringlab run: note: --uneven takes 100 batches an epoch from rank 1, which has 4: it gets none" <<<"$out" &&
  ok "an --uneven that leaves a rank no batch is noted" || bad "no note for --uneven 1:100: $out"

# 2. The report holds every field, with real values.
/usr/bin/python3 - "$work/r.json" <<'PY' && ok "report fields" || bad "report fields"
import json, sys
r = json.load(open(sys.argv[1]))
need = ["world_size", "backend", "algorithm", "samples", "batch_size", "seed", "epochs", "lr", "drop_last",
        "shuffle", "batches_per_epoch", "allreduce_demo", "shards", "epoch_mse", "step_loss", "steps",
        "train_seconds", "us_per_step"]
missing = [k for k in need if k not in r]
assert not missing, missing
assert r["allreduce_demo"] == {"input": [1.0, 2.0, 3.0], "output": [1.0, 2.0, 3.0]}
assert len(r["shards"]) == 1 and len(r["shards"][0]) == 4 and len(r["shards"][0][0]) == 256
assert r["shards"][0][0][:8] == [99, 70, 55, 138, 66, 19, 48, 54]
assert len(r["step_loss"][0]) == 32 and r["steps"] == 32
assert [round(x, 6) for x in r["epoch_mse"]] == [0.900974, 0.136688, 0.06536, 0.062745]
assert r["us_per_step"] > 0 and r["train_seconds"] > 0
PY

# 3. Four ranks: every rank's shards in the report, disjoint within an epoch.
"$ringlab" run -q -n 4 --report "$work/r4.json" || bad "4-rank run exited non-zero"
/usr/bin/python3 - "$work/r4.json" <<'PY' && ok "4-rank report: shards of every rank" || bad "4-rank report"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["shards"]) == 4 and len(r["step_loss"]) == 4
for e in range(4):
    seen = [i for rank in r["shards"] for i in rank[e]]
    assert sorted(seen) == list(range(256)), e
assert r["allreduce_demo"]["output"] == [4.0, 8.0, 12.0]
PY

# 3b. The report lists the whole job, under the names a scenario's `job` takes: faults, uneven
# inputs, Join and the rest included, so a report turns back into the same run.
"$ringlab" run -q -n 2 --epochs 2 --weight-decay 0.01 --grad-accum 2 --momentum 0.9 --fault delay:1:1 \
  --no-collective-check --trace-level steps --timeout 30 --report "$work/job.json" || bad "a run with every job flag exited non-zero"
/usr/bin/python3 - "$work/job.json" "$work/again.json" <<'PY' && ok "report: the whole job, under the scenario's names" || bad "report: the job's fields"
import json, sys
r = json.load(open(sys.argv[1]))
want = {"world_size": 2, "weight_decay": 0.01, "grad_accum": 2, "momentum": 0.9, "faults": ["delay:1:1"],
        "check_collectives": False, "trace_level": "steps", "timeout_s": 30.0, "uneven": [], "join": False,
        "epochs": 2}
wrong = {k: r.get(k) for k, v in want.items() if r.get(k) != v}
assert not wrong, wrong
keys = ["world_size", "backend", "algorithm", "samples", "hidden", "batch_size", "lr", "momentum", "weight_decay",
        "seed", "epochs", "drop_last", "shuffle", "set_epoch", "bucket_cap_kb", "first_bucket_kb", "grad_accum",
        "timeout_s", "trace_level", "faults", "uneven", "join", "check_collectives"]
json.dump({"title": "again", "description": "the report's job", "job": {k: r[k] for k in keys}}, open(sys.argv[2], "w"))
PY
"$ringlab" run -q --scenario "$work/again.json" --report "$work/again-report.json" || bad "the report's job, as a scenario, did not run"
/usr/bin/python3 - "$work/job.json" "$work/again-report.json" <<'PY' && ok "the report's job, run again: the same losses" || bad "the report's job, run again"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["epoch_mse"] == b["epoch_mse"] and len(a["epoch_mse"]) == 2, (a["epoch_mse"], b["epoch_mse"])
assert a["faults"] == b["faults"] and a["grad_accum"] == b["grad_accum"]
PY

# 3c. A worker started by hand, with no controller (torchrun-style environment, or none: one
# process alone) prints the script's lines itself, the same as `ringlab run`.
free_port=$(/usr/bin/python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
seed_out=$(timeout 120 env -u RANK -u WORLD_SIZE -u RINGLAB_EVENT_ADDR MASTER_PORT="$free_port" "$ringlab" worker 2>&1) ||
  bad "a hand-started worker exited non-zero: $seed_out"
for line in "epoch 1 done, MSE over the whole dataset: 0.900974" "epoch 4 done, MSE over the whole dataset: 0.062745" \
            "destroy_process_group  : done"; do
  grep -qxF -- "$line" <<<"$seed_out" && ok "hand-started worker prints: $line" || bad "hand-started worker, missing: $line"
done

# 3d. Help > About with no display to show it on: printed, each library with its licence.
if about=$(env -u DISPLAY -u WAYLAND_DISPLAY timeout 30 "$ringlab" gui --about 2>&1); then
  grep -qE "^  gloo +the gloo backend +BSD-3-Clause$" <<<"$about" && grep -qE "^  Dear ImGui +the interface +MIT$" <<<"$about" &&
    ok "gui --about without a display prints the libraries and licences" || bad "gui --about printed: $about"
elif grep -q "built without the desktop app" <<<"$about"; then
  echo "SKIP gui --about: no desktop app in this build"
else
  bad "gui --about without a display failed: $about"
fi

# 4. Bad input: one clear line naming the flag, a non-zero exit, fast.
expect_error() {  # expected-text, args...
  local want=$1; shift
  local msg rc
  msg=$(timeout 10 "$ringlab" "$@" 2>&1); rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF -- "$want" <<<"$msg"; then ok "error for $*: $(head -1 <<<"$msg")"
  else bad "expected '$want' and a non-zero exit for $* (rc=$rc): $msg"; fi
}
expect_error "--samples" run --samples 0
expect_error "--batch-size" run --batch-size 0
expect_error "--lr" run --lr nan
expect_error "--lr" run --lr -1
expect_error "--lr" run --lr inf
expect_error "--epochs" run --epochs -1
expect_error "--world-size" run --world-size 0
expect_error "--world-size" run --world-size 100000
expect_error "--backend" run --backend carrier-pigeon
# Refusals that say what would work instead.
examples=$(cd "$(dirname "$0")/../../examples" && pwd)
expect_error "--fault works on ringlab's own workers only" run --torch "$examples/ddp_cpu.py" -n 2 --fault kill:1@3
expect_error "--torch runs its script on one node" run --torch "$examples/ddp_cpu.py" --nnodes 2 --nproc-per-node 1
expect_error "--trace goes with --compare-report" simulate --trace /nonexistent.json
expect_error "--hidden" run --hidden 48,,48
expect_error "--hidden" run --hidden abc
expect_error "--report" run --report /nonexistent-dir/r.json
expect_error "--algorithm" run --algorithm tree
expect_error "--trace-level" run --trace-level everything
expect_error "--bucket-cap-kb" run --bucket-cap-kb 0
expect_error "--node-rank" run --nnodes 2 --node-rank 5 -n 4
expect_error "samples" run --samples banana

# 5. The GPU plugin is loaded only for NCCL, and not at all without the NVIDIA driver; forced,
# it loads and gives its own answer (this is the check that the plugin itself still loads).
plugin="$(dirname "$ringlab")/libringlab_cuda.so"
if [ ! -f "$plugin" ]; then
  echo "SKIP plugin checks: this build has no GPU plugin (built without CUDA)"
elif /usr/bin/python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
  echo "SKIP plugin checks: this machine has the NVIDIA driver (scripts/gpu-check.sh covers NCCL)"
else
  expect_error "no NVIDIA driver is installed: libcuda.so.1 not found" run --backend nccl
  msg=$(RINGLAB_SKIP_DRIVER_PROBE=1 timeout 20 "$ringlab" run --backend nccl 2>&1); rc=$?
  if [ $rc -eq 2 ] && grep -qF "no CUDA device" <<<"$msg" && ! grep -qF "libcuda.so.1 not found" <<<"$msg"; then
    ok "the plugin loads when forced and answers for itself: $msg"
  else bad "forced plugin load (rc=$rc): $msg"; fi
  # The dynamic loader's own log of every library each process loads: the controller and both
  # workers must show up (they load gloo), and none may load the plugin.
  LD_DEBUG=files timeout 60 "$ringlab" run -q -n 2 --epochs 1 > "$work/ld.log" 2>&1
  loaders=$(grep -E "file=libgloo\.so" "$work/ld.log" | awk '{print $1}' | sort -u | wc -l)
  if [ "$loaders" -ne 3 ]; then bad "expected the controller and 2 workers in the loader's log, saw $loaders processes"
  elif grep -q "libringlab_cuda" "$work/ld.log"; then bad "a gloo run loaded the GPU plugin"
  else ok "a gloo run's controller and 2 workers do not load the GPU plugin"; fi
fi

# A learning rate the model cannot take: every process ends well on a loss of nan. The run says
# it diverged and where, exits 1, and the report is not "ok"; the MSE line prints nan as Python does.
timeout 60 "$ringlab" run -n 2 --lr 5 --epochs 3 --report "$work/diverged.json" --metrics "$work/diverged.csv" \
  > "$work/diverged.out" 2> "$work/diverged.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "^ringlab run: the training diverged: rank [01]'s loss was inf at step [0-9]" "$work/diverged.err" &&
   grep -q "^epoch 3 done, MSE over the whole dataset: nan$" "$work/diverged.out" &&
   grep -q ",nan," "$work/diverged.csv" && ! grep -q -- "-nan" "$work/diverged.csv" &&
   python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] is False and "diverged" in r["failure"]' "$work/diverged.json"; then
  ok "a diverged run (--lr 5): exit 1, the step its loss became inf, the report not ok"
else bad "diverged run: exit $rc: $(head -2 "$work/diverged.err")"; fi

# A hang says so before any timeout: rank 1 sleeps a minute before each of its steps, the timeout
# is longer still. The note comes (15 s of no new step); Ctrl-C then stops the run and says where
# each rank was, and names the injected delay that held them.
"$ringlab" run -n 2 --epochs 1 --fault delay:1:60000 --timeout 120 > "$work/quiet.out" 2> "$work/quiet.err" &
pid=$!
for _ in $(seq 600); do grep -q "reported no" "$work/quiet.err" && break; kill -0 $pid 2> /dev/null || break; sleep 0.1; done
kill -INT $pid 2> /dev/null
wait $pid
rc=$?
# The note says where each rank is by its last report: rank 0 inside step 0's all-reduce, rank 1
# (asleep in its delay) past the demo all-reduce only.
if grep -q "^ringlab run: the ranks have reported no \(new \)\?step .*15 s.*until --timeout (120 s) ends the run; Ctrl-C stops it. Where each rank is, by its last report:$" "$work/quiet.err" &&
   grep -q "^  rank 0: step 0, collective 2 (ring, bucket 0), in reduce-scatter" "$work/quiet.err" &&
   grep -q "^  rank 1: step 0, having completed collective 1 (the \[1, 2, 3\] demo all-reduce) before it$" "$work/quiet.err" &&
   grep -q "^  so: rank 1 has not joined collective 2, where rank 0 waits for it$" "$work/quiet.err" &&
   grep -q "^ringlab run: interrupted by SIGINT" "$work/quiet.err" && grep -q "^where each rank was:" "$work/quiet.err" &&
   grep -q "^fault injected: rank 1: delay: 60000 ms before each of its steps" "$work/quiet.err" &&
   [ $rc -ne 0 ]; then
  ok "a hung run: after 15 s of no new step it says the ranks may be waiting for each other (exit $rc after Ctrl-C)"
else bad "a hung run's note (exit $rc): $(cat "$work/quiet.err")"; fi

[ $fail -eq 0 ] && echo "cli_run: all checks passed" || echo "cli_run: FAILED"
exit $fail
