#!/usr/bin/env bash
# A PyTorch script under ringlab (`ringlab run --torch`): the course's script examples/ddp_cpu.py,
# watched by ringlab_torch, at world sizes 2 and 4.
#   - the report's shards equal ringlab's own run of the same job, and its per-epoch MSE equals
#     the lines the script printed itself;
#   - every step's every bucket all-reduce is in the trace; in teaching mode every ring step too;
#   - the app, headless, draws the script's ring, sampler and loss, and side by side overlays the
#     script's run on the engine's, and the two coincide;
#   - a rank of the script killed: the run ends (well before its timeout) and names that rank;
#   - a rank that skips a step ends its script one collective early: the report names it as the
#     cause, not only the error of the rank it left waiting;
#   - a rank that stalls outside a collective: the watchdog ends the run, and the ranks' last
#     reports name it missing from the collective the other waits in; one stuck before
#     init_process_group (nothing reported at all) is ended the same way;
#   - the script's ranks printing at once, unbuffered (a print is two writes): every line whole;
#     a failing rank's last stderr line (a SyntaxError) is in the failure; in a terminal no
#     progress bar lands among the script's lines.
set -uo pipefail
ringlab=$(realpath "$1")
src=$2
py=/usr/bin/python3
[ -x $py ] || { echo "SKIP: $py is not installed"; exit 77; }
$py -c "import torch" 2>/dev/null || { echo "SKIP: PyTorch is not installed for $py (apt-get install python3-torch)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }
script=$src/examples/ddp_cpu.py

# A failed run's whole account: the controller's message names the failure first and lists where
# every rank was after it; the script's own output shows how far it got.
show_failure() {
  sed -n '1,60p' "$1.err" | sed 's/^/     /'
  echo "     the script's last lines:"; tail -5 "$1.out" | sed 's/^/     /'
}

for n in 2 4; do
  # ringlab's own run first: the teaching-mode check below compares against it even when the
  # script's run at this world size failed.
  "$ringlab" run -q -n $n --report "$work/r$n.json" 2> "$work/r$n.err" || { fail "world size $n: ringlab's own run failed: $(head -5 "$work/r$n.err")"; continue; }
  if ! "$ringlab" run --torch "$script" -n $n --report "$work/t$n.json" --trace "$work/t$n.trace" \
       > "$work/t$n.out" 2> "$work/t$n.err"; then
    fail "world size $n: ringlab run --torch failed:"; show_failure "$work/t$n"; continue
  fi
  if $py - "$work/t$n.json" "$work/r$n.json" "$work/t$n.out" "$work/t$n.trace" $n > "$work/cmp" 2>&1 <<'EOF'
import json, re, sys
torch_run, own_run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
printed = [float(m) for m in re.findall(r"epoch \d+ done, MSE over the whole dataset: ([0-9.]+)", open(sys.argv[3]).read())]
trace = json.load(open(sys.argv[4]))["traceEvents"]
n = int(sys.argv[5])
assert torch_run["ok"], torch_run.get("failure")
assert torch_run["shards"] == own_run["shards"], "the script's shards differ from ringlab's"
assert len(printed) == 4 and len(torch_run["epoch_mse"]) == 4, (printed, torch_run["epoch_mse"])
# The script prints six decimals: its report must say the same values.
assert all(abs(a - b) <= 5e-7 for a, b in zip(torch_run["epoch_mse"], printed)), (torch_run["epoch_mse"], printed)
assert all(abs(a - b) <= 1e-5 for a, b in zip(torch_run["epoch_mse"], own_run["epoch_mse"]))
steps = torch_run["steps"]
per_rank = [e for e in trace if e.get("ph") == "X" and e.get("cat") == "collective" and "bucket" in e.get("args", {})
            and e["args"]["bucket"] >= 0]
ranks = {e["pid"] for e in per_rank}
assert len(ranks) == n, f"bucket all-reduces from {len(ranks)} ranks, not {n}"
assert len(per_rank) >= n * steps, f"{len(per_rank)} bucket all-reduces for {steps} steps x {n} ranks"
# After the script's own lines, ringlab says once what it watched.
said = [l for l in open(sys.argv[3]).read().splitlines() if l.startswith("ringlab run: ")]
assert len(said) == 1 and said[0].startswith(f"ringlab run: ddp_cpu.py on {n} ranks ended well: {steps} steps in 4 epochs, "), said
print(f"{steps} steps, {len(per_rank)} bucket all-reduces, MSE {printed}")
EOF
  then
    ok "world size $n: $(tail -1 "$work/cmp"); shards equal ringlab's own run"
  else
    fail "world size $n:"; sed 's/^/     /' "$work/cmp"
  fi
done

# Teaching mode, asked for by ringlab (--algorithm ring): every bucket as a ring of isend/irecv,
# every chunk reported.
if "$ringlab" run --torch "$script" -n 4 --algorithm ring --report "$work/teach.json" --trace "$work/teach.trace" \
     > "$work/teach.out" 2> "$work/teach.err" && $py - "$work/teach.trace" "$work/teach.json" "$work/r4.json" > "$work/cmp" 2>&1 <<'EOF'
import json, sys
trace = json.load(open(sys.argv[1]))["traceEvents"]
teach, own = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
chunks = [e for e in trace if e.get("cat") == "ring" and e.get("ph") == "X"]
assert chunks, "no ring chunk in the trace"
# A ring of 4: 3 reduce-scatter and 3 all-gather steps per bucket, one chunk per rank per step.
per_step = 2 * 3 * 4
assert len(chunks) >= per_step * teach["steps"], f"{len(chunks)} chunks for {teach['steps']} steps"
assert all(abs(a - b) <= 1e-5 for a, b in zip(teach["epoch_mse"], own["epoch_mse"])), "teaching mode changed the training"
print(f"{len(chunks)} ring chunks over {teach['steps']} steps")
EOF
then ok "teaching mode (--algorithm ring), 4 ranks: $(tail -1 "$work/cmp"), the same MSE as ringlab's run"
else fail "teaching mode:"; cat "$work/cmp" | sed 's/^/     /'; sed -n '1,60p' "$work/teach.err" | sed 's/^/     /'; fi

# The app, headless: the script's ring, sampler and loss; side by side, the two runs coincide.
if command -v xvfb-run > /dev/null; then
  if xvfb-run -a -s "-screen 0 1280x720x24 -noreset" "$ringlab" gui --torch "$script" --side-by-side --frames 300 --wait-run \
       --width 1280 --height 720 --state-json "$work/state.json" > /dev/null 2> "$work/gui.err" &&
     $py - "$work/state.json" > "$work/cmp" 2>&1 <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "finished", s["run_phase"]
assert s["ring"] is not None, "no ring drawn"
assert s["sampler_epochs"] >= 4, s["sampler_epochs"]
assert len(s["overlays"]) == 1 and s["overlays"][0]["label"].startswith("PyTorch"), s["overlays"]
script_mse, engine_mse = s["overlays"][0]["epoch_mse"], s["epoch_mse"]
assert len(script_mse) == len(engine_mse) == 4, (script_mse, engine_mse)
assert all(abs(a - b) <= 1e-5 for a, b in zip(script_mse, engine_mse)), (script_mse, engine_mse)
# The controls name the script and show the training it reported, not the scenario's fields.
said = s["said"]
assert said["title"] == "PyTorch script: ddp_cpu.py", said
assert "Epochs: 4" in said["script_job"] and "Learning rate: 0.03" in said["script_job"], said["script_job"]
assert said["menu_bar"] == "ddp_cpu.py · 4 ranks, gloo, ring, lr 0.03", said["menu_bar"]
assert said["curves_agree"].startswith("ringlab and PyTorch: ") and "4 epochs" in said["curves_agree"], said
print(f"script {script_mse[-1]:.6f}, engine {engine_mse[-1]:.6f}")
EOF
  then ok "app, side by side: the script's run overlaid on the engine's, coinciding ($(tail -1 "$work/cmp"))"
  else fail "app, side by side: $(cat "$work/cmp" | tail -3; tail -3 "$work/gui.err")"; fi
  if xvfb-run -a -s "-screen 0 1280x720x24 -noreset" "$ringlab" gui --torch "$script" --frames 300 --wait-run \
       --width 1280 --height 720 --state-json "$work/alone.json" > /dev/null 2> "$work/gui.err" &&
     $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["torch_live"] and s["run_phase"] == "finished" and s["ring"] and len(s["epoch_mse"]) == 4, s
assert s["sampler_newest"]["ranks"] == 4, s["sampler_newest"]
said = s["said"]
assert said["title"] == "PyTorch script: ddp_cpu.py" and "Epochs: 4" in said["script_job"], said' "$work/alone.json" 2> "$work/cmp"
  then ok "app, the script alone: its ring, its 4 ranks' shards and 4 epochs of MSE are drawn, its name and training in the controls"
  else fail "app, the script alone: $(tail -2 "$work/cmp") (the app said: $(tail -3 "$work/gui.err"))"; fi
  # Rank 1 leaves out a step: the Failure lab blames it, not rank 0's lost connection.
  xvfb-run -a -s "-screen 0 1280x720x24 -noreset" "$ringlab" gui --torch "$src/tests/python/ddp_rank.py" \
    --world-size 2 --frames 100 --wait-run --width 1280 --height 720 --state-json "$work/skip.json" \
    -- --skip-at-step 3 --fail-rank 1 > /dev/null 2> "$work/gui.err"
  if $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
f = s["failure"]
assert s["run_phase"] == "failed" and f["culprits"] == [1], (s["run_phase"], f)
assert [(r["rank"], r["cause"], r["collective"]) for r in f["ranks"]] == [(0, "waiting", 6), (1, "ended-early", 5)], f' \
       "$work/skip.json" 2> "$work/cmp"
  then ok "app, a rank that skipped a step: the Failure lab blames rank 1, which ended after all-reduce #5"
  else fail "app, a skipped step: $(tail -2 "$work/cmp") (the app said: $(tail -3 "$work/gui.err"))"; fi
  # Both ranks raise at once: the Failure lab names both as raising errors of their own, not as
  # having "never joined" the next all-reduce while the others waited until the timeout.
  xvfb-run -a -s "-screen 0 1280x720x24 -noreset" "$ringlab" gui --torch "$src/tests/python/ddp_rank.py" \
    --world-size 2 --frames 100 --wait-run --width 1280 --height 720 --state-json "$work/raise.json" \
    -- --fail-at-step 3 > /dev/null 2> "$work/gui.err"
  if $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
f = s["failure"]
assert s["run_phase"] == "failed" and f["culprits"] == [0, 1], (s["run_phase"], f)
assert [r["cause"] for r in f["ranks"]] == ["raised", "raised"], f' "$work/raise.json" 2> "$work/cmp"
  then ok "app, both ranks raising at once: the Failure lab names both as raising errors of their own"
  else fail "app, both ranks raising: $(tail -2 "$work/cmp") (the app said: $(tail -3 "$work/gui.err"))"; fi
  # Rank 1 calls os._exit(3): the Failure lab names it by its exit code, not as missing from the
  # next all-reduce until a timeout that never came.
  xvfb-run -a -s "-screen 0 1280x720x24 -noreset" "$ringlab" gui --torch "$src/tests/python/ddp_rank.py" \
    --world-size 3 --frames 100 --wait-run --width 1280 --height 720 --state-json "$work/exit.json" \
    -- --exit-at-step 5 --fail-rank 1 --epochs 4 > /dev/null 2> "$work/gui.err"
  if $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
f = s["failure"]
assert s["run_phase"] == "failed" and f["culprits"] == [1], (s["run_phase"], f)
assert [r["cause"] for r in f["ranks"]] == ["waiting", "exited", "waiting"], f' "$work/exit.json" 2> "$work/cmp"
  then ok "app, a rank that called os._exit(3): the Failure lab names rank 1 by its exit code"
  else fail "app, os._exit: $(tail -2 "$work/cmp") (the app said: $(tail -3 "$work/gui.err"))"; fi
  # A script that does not tell watch() its epochs: the controls count the epochs it began,
  # and say so, rather than show JobConfig's default.
  # Side by side, the engine then trains the 3 epochs too, not JobConfig's 4.
  xvfb-run -a -s "-screen 0 1280x720x24 -noreset" "$ringlab" gui --torch "$src/tests/python/ddp_rank.py" \
    --world-size 2 --side-by-side --frames 100 --wait-run --width 1280 --height 720 --state-json "$work/unnamed.json" \
    -- --epochs 3 --unnamed-epochs > /dev/null 2> "$work/gui.err"
  if $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "finished", s["run_phase"]
assert "Epochs: 3 (counted)" in s["said"]["script_job"], s["said"]
assert len(s["epoch_mse"]) == 3, s["epoch_mse"]' "$work/unnamed.json" 2> "$work/cmp"
  then ok "app, a script that does not name its epochs: the controls show the 3 it began, and side by side the engine trains 3"
  else fail "app, unnamed epochs: $(tail -2 "$work/cmp") (the app said: $(tail -3 "$work/gui.err"))"; fi
else
  echo "note: no xvfb-run here: the app's checks are not run"
fi

# A rank of the script killed by SIGKILL.
"$ringlab" run --torch "$src/tests/python/ddp_rank.py" -n 2 -q --timeout 300 -- --samples 2000000 --epochs 50 \
  > "$work/kill.out" 2> "$work/kill.err" &
run=$!
victim=""
for i in $(seq 300); do
  for pid in $(pgrep -P $run 2>/dev/null); do
    tr '\0' '\n' < /proc/$pid/environ 2>/dev/null | grep -qx "RANK=1" && victim=$pid
  done
  [ -n "$victim" ] && break; sleep 0.1
done
if [ -z "$victim" ]; then
  fail "kill: rank 1 of the script never appeared"; kill $run 2>/dev/null
else
  sleep 3
  t0=$(date +%s)
  kill -9 "$victim"
  wait $run; rc=$?
  took=$(( $(date +%s) - t0 ))
  if [ $rc != 0 ] && grep -q "rank 1 failed: killed by SIGKILL" "$work/kill.err" && [ $took -lt 60 ]; then
    ok "a rank of the script killed: the run ended after ${took} s (timeout 300 s), naming rank 1"
  else
    fail "kill: exit $rc after ${took} s: $(head -3 "$work/kill.err")"
  fi
fi

# failing_rank NAME LINE WHAT TIMEOUT ARGS...: tests/python/ddp_rank.py at 2 ranks, with rank 1
# doing ARGS; the run must fail, and its report have a line starting with LINE.
failing_rank() {
  local name=$1 line=$2 what=$3 timeout=$4
  shift 4
  "$ringlab" run --torch "$src/tests/python/ddp_rank.py" -n 2 -q --timeout "$timeout" -- "$@" --fail-rank 1 \
    > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  if [ $rc != 0 ] && awk -v l="$line" 'index($0, l) == 1 {found = 1} END {exit !found}' "$work/$name.err"; then
    ok "$what, exit $rc"
  else fail "$name: exit $rc"; show_failure "$work/$name"; fi
}
# Rank 1 leaves out step 3 and so ends one collective early; rank 0 fails in the collective rank
# 1 never joined ("Connection closed by peer"). The rank that ended early heads the failure.
failing_rank skip "ringlab run: rank 1 ended its training after collective 5, while rank 0 in collective 6 still waited for it: the ranks did not call the same collectives" \
  "a rank that skipped a step: named as ending one collective early" 120 --skip-at-step 3
# Rank 1 calls one dist.all_reduce more than rank 0 before step 3: gloo aborts it on a message
# larger than the buffer it posted, and the failure says what gloo's words mean.
failing_rank extra "ringlab run: rank 1 failed: killed by SIGABRT; its stderr ended with:" \
  "a rank that called an extra all_reduce: gloo's abort explained" 120 --extra-at-step 3
grep -q "(gloo: a message of [0-9]* bytes came for a buffer of [0-9]*: the ranks were in different collectives" "$work/extra.err" ||
  { fail "extra: gloo's abort not explained"; show_failure "$work/extra"; }
# Rank 1 calls os._exit(3) before step 3: no error of its own, its last events unsent. It is
# named by its exit code, and rank 0's lost connection, if it reports one, is not "first error".
failing_rank exit "ringlab run: rank 1 failed: exit code 3" \
  "a rank that called os._exit(3): named by its exit code" 120 --exit-at-step 3
if grep -q "^first error: " "$work/exit.err"; then
  fail "exit: a peer's lost connection was given as the first error"; show_failure "$work/exit"
fi
# Rank 1 sleeps before step 3: rank 0 waits in the all-reduce rank 1 never starts, until the
# watchdog (--timeout 5, so 20 s without progress) ends the run.
failing_rank stall "from the ranks' last reports: collective 4 has ranks {0} waiting in it; missing ranks: {1}" \
  "a rank that stalled before step 3: the watchdog ended the run, rank 1 missing from collective 4" 5 --stall-at-step 3
# Rank 1 naps 3 s before step 0 and then trains on: rank 0's first step waits that long in its
# all-reduce, and the run's mean step (about 3 s / 8 steps) describes no step: the line after the
# run names the slow step with the others' time, and the report keeps it.
"$ringlab" run --torch "$src/tests/python/ddp_rank.py" -n 2 --report "$work/nap.json" -- --nap-at-step 0 --nap-s 3 --fail-rank 1 \
  > "$work/nap.out" 2> "$work/nap.err"
rc=$?
if [ $rc = 0 ] && $py - "$work/nap.out" "$work/nap.json" << 'PY'
import json, re, sys
said = [l for l in open(sys.argv[1]).read().splitlines() if l.startswith("ringlab run: ")]
assert len(said) == 1, said
m = re.search(r", (\d+) µs per step \(rank 0\); step 0 alone took (\d+\.\d) s \(the others (\d+) µs each\)", said[0])
assert m, said[0]
mean, took, others = int(m.group(1)), float(m.group(2)), int(m.group(3))
assert took >= 3.0 and others * 2 <= mean, (took, others, mean)
slowest = json.load(open(sys.argv[2]))["slowest_step"]
assert slowest["step"] == 0 and slowest["us"] >= 3e6, slowest
PY
then ok "a rank that napped 3 s before step 0: the line names the slow step beside the others' time"
else fail "nap: exit $rc"; cat "$work/nap.out" | tail -3 | sed 's/^/     /'; show_failure "$work/nap"; fi
# Rank 1 sleeps before init_process_group, where rank 0 waits for it: no rank reaches watch(), so
# nothing is heard at all, and the watchdog still ends the run after --timeout + 15 s.
failing_rank before_init "first error: no rank reached ringlab_torch.watch(...) within 18 s of starting" \
  "a rank stuck before init_process_group: the watchdog ended the run, though nothing was reported" 3 --stall-before-init

# Two ranks printing 300 lines each at once, unbuffered: each print() is its text and then its
# newline, two writes, and ranks that shared the terminal glued their lines together.
cat > "$work/chatty.py" << 'PY'
import os
rank = os.environ["RANK"]
for i in range(300):
    print(f"[rank {rank}] line {i}", flush=True)
print(f"[rank {rank}] no newline at the end", end="")
PY
PYTHONUNBUFFERED=1 "$ringlab" run --torch "$work/chatty.py" -n 2 > "$work/chatty.out" 2> "$work/chatty.err"
if $py - "$work/chatty.out" << 'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
script = [l for l in lines if l.startswith("[rank")]
assert len(script) == 602, len(script)
assert all(re.fullmatch(r"\[rank [01]\] (line \d+|no newline at the end)", l) for l in script), \
    [l for l in script if not re.fullmatch(r"\[rank [01]\] (line \d+|no newline at the end)", l)][:3]
assert "" not in lines[:-1], "an empty line: a newline written apart from its text"
PY
then ok "two ranks printing at once, unbuffered: 602 whole lines, the last ones without a newline given one"
else fail "chatty: $(tail -3 "$work/chatty.err")"; fi

# In a terminal, a script's run draws no progress bar: its total would be JobConfig's steps, not
# the script's, and its carriage returns landed in the middle of the script's lines.
if command -v script > /dev/null; then
  script -qec "'$ringlab' run --torch '$work/chatty.py' -n 2" /dev/null > "$work/chatty.tty" 2>&1
  if grep -q "\] step [0-9]*/[0-9]" "$work/chatty.tty"; then
    fail "a script's run in a terminal drew a progress bar: $(grep -m1 -o ".\{20\}\] step [0-9]*/[0-9]*.\{20\}" "$work/chatty.tty")"
  elif [ "$(grep -c "^\[rank [01]\] line [0-9]*.\?$" "$work/chatty.tty")" != 600 ]; then
    fail "a script's run in a terminal: $(grep -c "^\[rank [01]\] line" "$work/chatty.tty") of 600 lines whole"
  else ok "a script's run in a terminal: no progress bar among its 600 lines"; fi
fi

# A script that does not compile: its stderr's last line says why, in the failure.
printf 'print("never closed"\n' > "$work/broken.py"
"$ringlab" run --torch "$work/broken.py" -n 2 --report "$work/broken.json" > /dev/null 2> "$work/broken.err"
rc=$?
# Its report has no job but the world: ringlab's defaults are not the script's.
if [ $rc = 1 ] && grep -q "^ringlab run: rank [01] failed: exit code 1; its stderr ended with: SyntaxError: '(' was never closed" "$work/broken.err" &&
   $py -c 'import json,sys; r=json.load(open(sys.argv[1])); assert "job_unknown" in r and "lr" not in r and r["world_size"] == 2 and r["batches_per_epoch"] is None, r' "$work/broken.json"
then ok "a script with a SyntaxError: the failure quotes it, exit 1; its report claims no job"
else fail "broken: exit $rc: $(grep ringlab "$work/broken.err" | head -2)"; fi

# A script whose watch() has no sampler: its samples and epochs are not known, and neither the
# summary nor the report presents ringlab's defaults as the script's. The report keeps --timeout,
# with which ringlab watched the run.
cat > "$work/no_sampler.py" << 'PY'
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import ringlab_torch
dist.init_process_group("gloo")
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
watcher = ringlab_torch.watch(model, optimizer=opt)
for epoch in range(2):
    for _ in range(5):
        x = torch.randn(8, 6)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        loss.backward()
        opt.step()
        watcher.step(loss)
dist.destroy_process_group()
PY
"$ringlab" run --torch "$work/no_sampler.py" -n 2 --timeout 7 --report "$work/no_sampler.json" > "$work/no_sampler.out" 2> "$work/no_sampler.err"
rc=$?
if [ $rc = 0 ] && grep -qE "^ringlab run: no_sampler.py on 2 ranks ended well: 10 steps, [0-9]+ µs per step \(rank 0\)(; step [0-9]+ alone took [^;]*)?; its epochs are not known" "$work/no_sampler.out" &&
   $py - "$work/no_sampler.json" << 'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["job_not_reported"] == ["samples", "epochs", "shuffle", "drop_last", "set_epoch"], r["job_not_reported"]
assert r["batches_per_epoch"] is None and r["steps"] == 10 and r["lr"] == 0.05 and r["batch_size"] == 8, r
assert r["timeout_s"] == 7.0, r["timeout_s"]
PY
then ok "a script without a sampler: its samples and epochs said to be unknown, in the summary and the report"
else fail "no_sampler: exit $rc: $(cat "$work/no_sampler.out" | tail -2) $(tail -2 "$work/no_sampler.err")"; fi
# A loader that does not draw from the sampler given to watch() takes every sample each epoch:
# the report's batches per epoch are those rank 0 took (it gave the sampler's share, 4 of 8).
cat > "$work/own_loader.py" << 'PY'
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
import ringlab_torch
dist.init_process_group("gloo")
torch.manual_seed(0)
data = TensorDataset(torch.randn(64, 6), torch.randn(64, 1))
sampler = DistributedSampler(data, seed=0)
loader = DataLoader(data, batch_size=8)  # the bug: no sampler=sampler
model = DDP(torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
watcher = ringlab_torch.watch(model, sampler=sampler, optimizer=opt, loader=loader, epochs=2)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in loader:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        watcher.step(loss)
dist.destroy_process_group()
PY
"$ringlab" run --torch "$work/own_loader.py" -n 2 --report "$work/own_loader.json" > "$work/own_loader.out" 2>&1
rc=$?
if [ $rc = 0 ] && $py -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["steps"] == 16 and r["batches_per_epoch"] == 8, (r["steps"], r["batches_per_epoch"])' "$work/own_loader.json"
then ok "a loader that ignores the sampler: the report's batches per epoch are the 8 rank 0 took, not the sampler's 4"
else fail "own_loader: exit $rc: $(tail -3 "$work/own_loader.out")"; fi

# The app's controls say the same of it.
if command -v xvfb-run > /dev/null; then
  xvfb-run -a -s "-screen 0 1280x720x24 -noreset" "$ringlab" gui --torch "$work/no_sampler.py" --world-size 2 \
    --frames 100 --wait-run --width 1280 --height 720 --state-json "$work/no_sampler_gui.json" > /dev/null 2> "$work/gui.err"
  if $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "finished", s["run_phase"]
said = s["said"]["script_job"]
assert "Samples: not reported" in said and "Epochs: not reported" in said and "Learning rate: 0.05" in said, said' \
     "$work/no_sampler_gui.json" 2> "$work/cmp"
  then ok "app, a script without a sampler: the controls say its samples and epochs were not reported"
  else fail "app, no sampler: $(tail -2 "$work/cmp") (the app said: $(tail -3 "$work/gui.err"))"; fi
fi

echo "$failures failure(s)"
[ $failures = 0 ]
