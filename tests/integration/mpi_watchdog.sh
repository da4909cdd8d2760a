#!/usr/bin/env bash
# MPI_Allreduce cannot be given a timeout; the watchdog is its timeout. Rank 1 of a 2-rank run
# is held 3 s before each step (a delay fault), with the run's timeout at 2 s, the native
# all-reduce and no collective check (which would otherwise meet the late rank first, in a wait
# that has its own timeout). Rank 0 waits inside MPI_Allreduce: the watchdog must end the job
# with a message naming the call and the timeout, the controller must say where each rank was,
# and no worker may be left. Without the watchdog the run would succeed, only slowly.
# Usage: mpi_watchdog.sh <ringlab binary> <source dir>. Exit 77: MPI is not built in.
set -uo pipefail
ringlab=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ringlab" run -q --backend mpi --epochs 0 >/dev/null 2>&1 || { echo "skip: MPI is not built in"; exit 77; }
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

timeout 120 "$ringlab" run -q -n 2 --backend mpi --algorithm native --no-collective-check --timeout 2 \
  --fault delay:1:3000 --samples 256 --epochs 1 --trace-level none >"$work/out" 2>"$work/err"
rc=$?
err=$(cat "$work/err")
[[ $rc -ne 0 && $rc -ne 124 ]] && ok "exit code $rc" || bad "exit code $rc (0: the stall went unnoticed; 124: the run hung)"
grep -q "rank 0: MPI_Allreduce: timed out after 2000 ms inside MPI; aborting the job" <<<"$err" &&
  ok "the watchdog names the call and the timeout" || bad "no watchdog message in: $err"
grep -q "where each rank was" <<<"$err" && ok "the controller says where each rank was" || bad "no rank positions in: $err"
grep -q "rank 0: step 0, collective [0-9]* (native" <<<"$err" &&
  ok "rank 0 is shown in its native all-reduce of step 0" || bad "rank 0's position is not its native all-reduce: $err"
sleep 0.3
left=$(pgrep -f "ringlab worker.*delay:1:3000" || true)
[[ -z "$left" ]] && ok "no worker left behind" || bad "workers left behind: $left"
exit $fail
