#!/usr/bin/env bash
# The failure labs from the command line: every fault ends the way the lesson says it does.
set -uo pipefail
ringlab=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
py=/usr/bin/python3

# Runs ringlab, records exit code and seconds taken.
run() { local t0; t0=$(date +%s%N); "$ringlab" "$@" >"$work/out" 2>"$work/err"; rc=$?; ms=$((($(date +%s%N) - t0) / 1000000)); }

# 1. Elastic restart: a rank killed mid-run, the group restarted from the last epoch
#    checkpoint, ends bit-identical to the same run uninterrupted.
for backend in gloo mpi; do
  "$ringlab" run -q --backend $backend --epochs 0 >/dev/null 2>&1 || continue
  run run -q -n 4 --backend $backend --epochs 4 --report "$work/clean.json"
  run run -q -n 4 --backend $backend --epochs 4 --fault kill:2@5 --max-restarts 2 --report "$work/restarted.json"
  [ $rc -eq 0 ] || bad "$backend restart: exit $rc: $(head -3 "$work/err")"
  $py - "$work/clean.json" "$work/restarted.json" <<'PY' && ok "$backend: killed at step 5 and restarted: parameters and MSE bit-identical" || bad "$backend restart not identical"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["final_parameters"] == b["final_parameters"], "parameters differ"
assert a["epoch_mse"] == b["epoch_mse"], (a["epoch_mse"], b["epoch_mse"])
assert a["steps"] == b["steps"], (a["steps"], b["steps"])
# The report keeps the fault asked for and the restart, with where it resumed and why.
assert b["faults"] == ["kill:2@5"] and a["restarts"] == [], (b["faults"], a["restarts"])
assert len(b["restarts"]) == 1 and b["restarts"][0].startswith("restart 1 of 2, from the end of epoch 2 (step 4), after: "), b["restarts"]
assert "rank 2" in b["restarts"][0] or "mpirun" in b["restarts"][0], b["restarts"]
PY
done

# The failure's first line names the rank the fault was injected into: the fault itself, before
# the rank whose collective check caught it, or rank 1's own failure where it failed first.
run run -q -n 4 --fault skip:1@5 --timeout 300
if [ $rc -eq 1 ] && { { head -1 "$work/err" | grep -q "^ringlab run: fault injected: rank 1 at step 5: skip" &&
                        sed -n 2p "$work/err" | grep -q "^then rank [023] failed"; } ||
                      { head -1 "$work/err" | grep -q "^ringlab run: rank 1 failed" &&
                        sed -n 2p "$work/err" | grep -q "^fault injected: rank 1 at step 5: skip"; }; }
then ok "--fault skip:1@5: the failure's first line names rank 1: $(head -1 "$work/err" | cut -c1-80)"
else bad "--fault skip:1@5: rc=$rc $(head -2 "$work/err")"; fi

# A straggler whose delay outlasts the others' timeout is named first, not only the rank that
# timed out waiting for it (it was not named at all).
run run -q -n 2 --epochs 1 --fault delay:1:5000 --timeout 3
if [ $rc -eq 1 ] && head -1 "$work/err" | grep -q "^ringlab run: fault injected: rank 1: delay: 5000 ms before each of its steps" &&
   sed -n 2p "$work/err" | grep -q "^then rank 0 failed"
then ok "--fault delay:1:5000 past --timeout 3: the failure's first line names the straggler"
else bad "--fault delay:1:5000: rc=$rc $(head -2 "$work/err")"; fi

# A rank whose process is stopped (SIGSTOP, or Ctrl-Z on it) is named as the cause, not only the
# rank that timed out waiting for it (whose flight record said rank 1's "process is gone").
"$ringlab" run -n 2 --epochs 1000000 --timeout 3 -q > "$work/out" 2> "$work/err" &
ctl=$!
stopped=""
for _ in $(seq 600); do
  for p in $(pgrep -P $ctl); do grep -qz '^RANK=1$' /proc/$p/environ 2> /dev/null && stopped=$p; done
  [ -n "$stopped" ] && break
  sleep 0.1
done
sleep 1  # into its training
[ -n "$stopped" ] && kill -STOP "$stopped"
for _ in $(seq 600); do kill -0 $ctl 2> /dev/null || break; sleep 0.1; done
kill -0 $ctl 2> /dev/null && { kill -KILL $ctl; bad "SIGSTOP of rank 1: the controller did not end within 60 s"; }
wait $ctl; rc=$?
[ -n "$stopped" ] && kill -CONT "$stopped" 2> /dev/null
if [ $rc -eq 1 ] && head -1 "$work/err" | grep -q "^ringlab run: rank 1's process was stopped (SIGSTOP, or Ctrl-Z on it)" &&
   sed -n 2p "$work/err" | grep -q "^then rank 0 failed" && ! grep -q "the process is gone" "$work/err"
then ok "rank 1 stopped by SIGSTOP: named first, then rank 0 that timed out waiting for it"
else bad "rank 1 stopped by SIGSTOP (pid ${stopped:-none found}): rc=$rc $(head -3 "$work/err")"; fi

# A run that fails after every restart says each restart's cause and that it failed in the end.
run run -n 4 --epochs 1 --uneven 1:1 --timeout 3 --max-restarts 1 --report "$work/gave_up.json"
if [ $rc -eq 1 ] && grep -q "^restart 1 of 1, from the start (no epoch had ended), after: rank 1 ended its training" "$work/out" &&
   ! grep -q "resumed from the last epoch checkpoint" "$work/out" &&
   $py -c 'import json,sys; r=json.load(open(sys.argv[1])); assert not r["ok"] and len(r["restarts"]) == 1, r["restarts"]' "$work/gave_up.json"
then ok "restarts that did not help: each restart's cause said, and the run failed (exit 1)"
else bad "restarts that did not help: rc=$rc $(grep -m2 restart "$work/out") $(head -1 "$work/err")"; fi

# A restart whose attempt failed before ending an epoch of its own goes back to the epoch the
# attempt had resumed from (it went back to the start: the checkpoint had been taken for it).
run run -n 2 --epochs 4 --uneven 1:1 --timeout 3 --max-restarts 2 --report "$work/twice.json"
if [ $rc -eq 1 ] && [ "$(grep -c "^restart [12] of 2, from the end of epoch 3 (step 12), after: " "$work/out")" = 2 ] &&
   $py -c 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r["restarts"]) == 2 and all("from the end of epoch 3" in n for n in r["restarts"]), r["restarts"]' "$work/twice.json"
then ok "a second restart resumes from the epoch the first resumed from: $(grep -m1 '^restart 2' "$work/out" | cut -c1-60)"
else bad "second restart: rc=$rc $(grep '^restart' "$work/out" | cut -c1-80)"; fi

# 2. Mismatched collectives are detected before any gradient moves, with both fingerprints.
# The timeout is 300 s and the bound 60 s: an ending that came from the check, not from a wait
# running out, on a machine however busy.
for fault in skip:1@5 extra:2@3 resize:3@4; do
  run run -q -n 4 --fault $fault --timeout 300
  if [ $rc -ne 0 ] && [ $ms -lt 60000 ] && grep -q "mismatched collectives: this rank is at #" "$work/err"; then
    ok "--fault $fault: stopped in ${ms} ms: $(grep -m1 -o 'first error: .*' "$work/err" | cut -c1-150)"
  else bad "--fault $fault: rc=$rc ms=$ms $(head -5 "$work/err")"; fi
done

# 3. Uneven inputs without Join hang; the flight recorder catches it at the timeout and names
#    the rank that is missing from the collective. The 60 s bound only catches a hang.
run run -q -n 4 --epochs 1 --uneven 1:1 --timeout 3 --dump-flight-recorder "$work/fr.json"
if [ $rc -ne 0 ] && [ $ms -lt 60000 ] && grep -q "missing ranks: {1}" "$work/err"; then ok "uneven inputs: diagnosed in ${ms} ms, missing ranks: {1}"
else bad "uneven inputs: rc=$rc ms=$ms $(tail -8 "$work/err")"; fi
$py -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['missing_ranks']==[1] and d['waiting_ranks']==[0,2,3], d" "$work/fr.json" \
  && ok "--dump-flight-recorder JSON names rank 1 missing" || bad "flight recorder JSON"

# 4. With --join the same uneven run completes.
run run -q -n 4 --epochs 2 --uneven 1:1 --join --report "$work/join.json"
[ $rc -eq 0 ] && ok "uneven inputs with --join complete" || bad "--join: rc=$rc $(head -5 "$work/err")"
# Rank 1, a batch short each epoch, shadows the others' last step of each: no loss of its own
# (it read 0.0), and the others' losses all there.
$py -c 'import json,sys; l=json.load(open(sys.argv[1]))["step_loss"]
assert [r.count(None) for r in l] == [0, 2, 0, 0] and l[1][1] is None and l[1][3] is None, l' "$work/join.json" \
  && ok "--join: the joined rank's shadow steps have no loss in the report (null)" || bad "--join step_loss: $(head -c 300 "$work/join.json")"
# 4b. And with gradient accumulation: the joined rank shadows only the micro-steps the others
#     all-reduce (it failed on a gloo size mismatch when it shadowed every one).
run run -q -n 2 --epochs 2 --uneven 1:3 --join --grad-accum 2 --report "$work/join-accum.json"
[ $rc -eq 0 ] && $py -c "import json,sys; r=json.load(open(sys.argv[1])); assert len(r['epoch_mse'])==2 and r['epoch_mse'][1] < r['epoch_mse'][0], r['epoch_mse']" "$work/join-accum.json" &&
  ok "uneven inputs with --join and --grad-accum 2 complete" || bad "--join --grad-accum: rc=$rc $(head -5 "$work/err")"

# 5. A killed rank without restarts: clean teardown, the rank and signal named.
run run -q -n 4 --fault kill:3@4
[ $rc -ne 0 ] && grep -q "rank 3 failed: killed by SIGKILL" "$work/err" && ok "kill:3@4 named: rank 3 killed by SIGKILL (${ms} ms)" \
  || bad "kill: rc=$rc $(head -3 "$work/err")"

# 6. A dropped connection (gloo): every rank fails with a clear error instead of hanging.
run run -q -n 4 --fault drop:1@4 --timeout 10
[ $rc -ne 0 ] && [ $ms -lt 120000 ] && grep -q "where each rank was" "$work/err" && ok "drop:1@4: run stopped in ${ms} ms" \
  || bad "drop: rc=$rc ms=$ms $(head -5 "$work/err")"

# 6b. The same two faults with a large model: its buckets (megabytes) go round the ring in
#     segments, some still queued for gloo's I/O thread when a peer goes. The others fail with
#     the peer named, and none of them crashes (a send given up on must not be written from
#     memory that is gone).
for fault in kill:1@3 drop:1@3; do
  run run -q -n 3 --hidden 1024,1024 --samples 768 --epochs 2 --fault $fault --timeout 10
  if [ $rc -ne 0 ] && [ $ms -lt 120000 ] && grep -q "first error\|failed" "$work/err" &&
     ! grep -q "SIGSEGV\|SIGABRT\|SIGBUS" "$work/err"; then ok "$fault with 4 MB buckets: stopped in ${ms} ms, no rank crashed"
  else bad "$fault with 4 MB buckets: rc=$rc ms=$ms $(head -6 "$work/err")"; fi
done

# 6c. A rank killed over MPI while those buckets move: where the launcher gave OpenMPI the single
#     copy (docs/launchers.md), the others may be reading the killed rank's memory with
#     process_vm_readv at that moment. The run still ends at once, nothing crashed, and ringlab's
#     own first line names rank 1 and its signal (mpirun only gives its exit code, 128 + the
#     signal; the rank that said nothing is the one).
if "$ringlab" run -q --backend mpi --epochs 0 >/dev/null 2>&1; then
  run run -q -n 3 --backend mpi --hidden 1024,1024 --samples 768 --epochs 2 --fault kill:1@3 --timeout 10
  if [ $rc -ne 0 ] && [ $ms -lt 120000 ] && grep -q "^ringlab run: rank 1 failed: killed by SIGKILL" "$work/err" &&
     ! grep -q "SIGSEGV\|SIGABRT\|SIGBUS\|process_vm_readv" "$work/err"; then ok "kill:1@3 over MPI with 4 MB buckets: stopped in ${ms} ms, rank 1 named"
  else bad "kill:1@3 over MPI with 4 MB buckets: rc=$rc ms=$ms $(head -12 "$work/err")"; fi
fi

# 7. A straggler: rank 1 sleeps 20 ms per step; every rank's step takes at least that long,
#    because the others wait for it in the all-reduce. The run ends well, and says what the fault
#    did to it (otherwise it reads as a plain run): its step time, on stderr.
run run -n 2 --epochs 1 --fault delay:1:20 --metrics "$work/m.csv" --trace-level steps
grep -qE "^ringlab run: with --fault delay:1:20 the run ended well: [0-9]+ steps on 2 ranks, [0-9]+ µs per step \(rank 0\)(; step [0-9]+ alone took .*)?$" "$work/err" &&
  ok "delay:1:20: the run ended well and says its step time" || bad "delay:1:20: no word of the fault: rc=$rc $(tail -3 "$work/err")"
$py - "$work/m.csv" <<'PY' && ok "delay:1:20: rank 0 waits for the straggler every step" || bad "straggler: $(head -3 "$work/m.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r0 = [float(r["step_us"]) for r in rows if r["rank"] == "0"]
assert len(r0) >= 4, len(r0)
assert min(r0[1:]) >= 15000, r0
PY
exit $fail
