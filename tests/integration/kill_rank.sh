#!/usr/bin/env bash
# Kill one worker of a 4-rank run with SIGKILL: the controller must tear the others down because
# it saw the rank die (not because a wait ran out), leave no process behind, exit non-zero, and
# say which rank died, how, and where every rank was. Done for gloo, and for MPI when it is built.
# The run's timeout is 300 s, so an ending that waited it out would take over 300 s; the bound
# below (25 s, ten times an idle machine's teardown) tells the two apart on a loaded machine.
set -uo pipefail
ringlab=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

# This run's workers only (ctest may run other multi-process tests at the same time): every
# worker is told to write its checkpoint into the run's own directory,
# $TMPDIR/ringlab-run-<run id>-<controller pid>-XXXXXX/run.ckpt.
own_workers() { pgrep -f "ringlab worker.*/ringlab-run-[0-9a-f]*-$1-[^/]*/run\.ckpt" || true; }

rank_pid() {  # run-pid rank -> pid of that rank's worker
  local parent=$1 rank=$2 pid
  for pid in $(own_workers "$parent"); do
    tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -qx "RANK=$rank" || \
      tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$rank" || continue
    tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -q "^RINGLAB_TOKEN=" || continue
    echo "$pid"; return 0
  done
  return 1
}

check_backend() {
  local backend=$1
  "$ringlab" run -q -n 4 --backend "$backend" --samples 400000 --epochs 100 --trace-level none --timeout 300 \
    >"$work/out" 2>"$work/err" &
  local run=$! victim="" i
  for i in $(seq 1 200); do victim=$(rank_pid "$run" 2) && break; sleep 0.05; done
  if [ -z "$victim" ]; then echo "FAIL $backend: rank 2's worker never appeared"; kill $run; fail=1; return; fi
  sleep 0.5
  local t0 t1
  t0=$(date +%s%N)
  kill -9 "$victim"
  wait $run; local rc=$?
  t1=$(date +%s%N)
  local ms=$(( (t1 - t0) / 1000000 ))
  local err; err=$(cat "$work/err")
  [ $rc -ne 0 ] && echo "ok   $backend: exit code $rc" || { echo "FAIL $backend: exit code 0 after a killed rank"; fail=1; }
  [ $ms -le 25000 ] && echo "ok   $backend: controller returned ${ms} ms after the kill" || { echo "FAIL $backend: took ${ms} ms"; fail=1; }
  if [ "$backend" = mpi ]; then want="killed by SIGKILL\|signal 9\|mpirun failed"; else want="rank 2 failed: killed by SIGKILL"; fi
  grep -q "$want" <<<"$err" && echo "ok   $backend: names the failure: $(grep -m1 "$want" <<<"$err")" || { echo "FAIL $backend: message lacks '$want': $err"; fail=1; }
  grep -q "where each rank was" <<<"$err" && echo "ok   $backend: says where each rank was" || { echo "FAIL $backend: no rank positions"; fail=1; }
  sleep 0.2
  local left; left=$(own_workers "$run")
  if [ -n "$left" ]; then
    echo "FAIL $backend: worker processes left behind: $(ps -o pid=,args= -p ${left//$'\n'/,} | head -3)"; fail=1
  else
    echo "ok   $backend: no worker left behind"
  fi
}

# SIGTERM from outside ringlab (kill -TERM, Slurm's scancel, a job's time limit) on rank 2: it is
# the cause, and where the ranks were says the others wait for it. It read "rank 2: stopped by
# the controller (SIGTERM)", with a flight record taken while its training went on, older than
# its last events, which put the healthy ranks down as missing.
check_outside_sigterm() {
  "$ringlab" run -q -n 4 --samples 400000 --epochs 100 --trace-level none --timeout 300 --report "$work/outside.json" >"$work/out" 2>"$work/err" &
  local run=$! victim="" i
  for i in $(seq 1 200); do victim=$(rank_pid "$run" 2) && break; sleep 0.05; done
  if [ -z "$victim" ]; then echo "FAIL sigterm: rank 2's worker never appeared"; kill $run; fail=1; return; fi
  # Killed in training, where the others wait in a collective for it: once rank 2 has used a
  # quarter of a second of CPU (its dataset made, about a third of epoch 0's 3,125 steps taken; at
  # half a second it could meet the epoch's end, rank 0 then busy evaluating). A fixed half second
  # of wall time was, on a busy machine, still before its first step: nobody was missing yet.
  local ticks=0
  for i in $(seq 1 600); do
    ticks=$(awk '{print $14 + $15}' "/proc/$victim/stat" 2> /dev/null) || break
    [ "${ticks:-0}" -ge 25 ] && break
    sleep 0.05
  done
  kill -TERM "$victim"
  wait $run; local rc=$?
  local err; err=$(cat "$work/err")
  [ $rc -ne 0 ] && echo "ok   sigterm: exit code $rc" || { echo "FAIL sigterm: exit code 0"; fail=1; }
  local want
  for want in "^ringlab run: rank 2 failed: it was ended by a SIGTERM that ringlab did not send (exit code 143)" \
              "rank 2: ended by a SIGTERM from process $$, which is not ringlab's" \
              "missing ranks: {2}$"; do
    grep -q "$want" <<<"$err" && echo "ok   sigterm: $(grep -m1 "$want" <<<"$err")" || { echo "FAIL sigterm: lacks '$want': $err"; fail=1; }
  done
  grep -q "rank 2: stopped by the controller" <<<"$err" && { echo "FAIL sigterm: said the controller stopped rank 2: $err"; fail=1; }
  # The report says it too: not interrupted (nobody asked ringlab), stopped from outside.
  local fields
  fields=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["interrupted"], r.get("stopped_by"), r.get("stopped_from_outside"))' "$work/outside.json" 2>&1)
  [[ $fields == "False None rank 2 was ended by a SIGTERM that ringlab did not send (exit code 143): kill, scancel, or a job's time limit" ]] &&
    echo "ok   sigterm: the report: $fields" || { echo "FAIL sigterm: the report says: $fields"; fail=1; }
}

check_backend gloo
check_outside_sigterm
if "$ringlab" run -q --backend mpi --epochs 0 >/dev/null 2>&1; then check_backend mpi; else echo "note: mpi not built"; fi
exit $fail
