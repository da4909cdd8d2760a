#!/usr/bin/env bash
# Slurm: `ringlab run --launcher srun` inside an allocation starts the ranks with one srun, and
# `srun ringlab worker` works without a controller (rank 0 hosts the store, on the first host of
# the step's node list). On a one-host Slurm cluster of its own (lib/slurm_cluster.bash):
#   1. --launcher srun outside an allocation is a clear error (checked before anything else);
#   2. salloc -n 4 + `ringlab run --launcher srun -n 4`: the report equals a plain local 4-rank run
#      (per-epoch MSE within 1e-6, all four ranks' shards), and the run's token is on no command
#      line (neither srun's nor a worker's);
#   3. `srun -n 2 ringlab worker`: rank 0's last epoch checkpoint holds the same parameters as a
#      local 2-rank run's final ones (within 1e-6);
#   4. srun killed (SIGKILL) in the middle of a run: the run fails naming srun, and the step's
#      ranks end (squeue shows no step) within a bound.
# Usage: slurm_launch.sh <ringlab binary> <source dir>. Exit 77, with the reason, when a cluster
# cannot be started here (not root, slurm-wlm or munge missing, a daemon that does not come up).
# The cluster's daemons are stopped on every exit.
set -uo pipefail
ringlab=$(realpath "$1")
source "$(dirname "$0")/lib/slurm_cluster.bash"
work=$(mktemp -d)
cleanup() {
  slurm_down
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# 1. Outside an allocation.
msg=$(env -u SLURM_JOB_ID timeout 10 "$ringlab" run --launcher srun -n 2 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -qF "SLURM_JOB_ID is not set: run ringlab inside salloc or an sbatch script" <<< "$msg"; then
  ok "outside an allocation: $msg"
else bad "--launcher srun outside an allocation: rc=$rc, $msg"; fi
msg=$(SLURM_JOB_ID=1 timeout 10 "$ringlab" run --launcher srun --backend mpi -n 2 2>&1)
[ $? -eq 2 ] && grep -qF -- "--launcher srun with --backend mpi" <<< "$msg" && ok "srun with MPI refused: $msg" ||
  bad "--launcher srun --backend mpi: $msg"

# The references, on this machine without Slurm.
timeout 120 "$ringlab" run -n 4 -q --report "$work/local4.json" || { bad "local 4-rank run"; exit 1; }
timeout 120 "$ringlab" run -n 2 -q --report "$work/local2.json" || { bad "local 2-rank run"; exit 1; }

if ! slurm_up "$work/cluster"; then
  echo "SKIP: no Slurm cluster here: $SLURM_UP_ERROR"
  exit 77
fi
echo "cluster: node $SLURM_NODE, $(sinfo -h -o '%P %T %C' | head -1) (partition, state, CPUs A/I/O/T)"

# 2. The controller inside an allocation, ranks started by srun. While it runs, its srun's
# environment holds the token; no process's command line may.
cat > "$work/run_in_allocation.sh" << 'EOF'
#!/bin/bash
# Inside salloc: the run in the background, its srun's command lines checked while it is there.
ringlab=$1 report=$2 cmdlines=$3
# 2048 samples: long enough (a few seconds) for the scan below to see srun's four tasks; the
# seed's 256 would be over in a fifth of a second.
"$ringlab" run --launcher srun -n 4 --epochs 200 --samples 2048 --report "$report" &
run=$!
for _ in $(seq 200); do
  srun_pid=$(pgrep -P "$run" -x srun) && break
  sleep 0.05
done
if [ -n "${srun_pid:-}" ]; then
  # The token goes to grep in a file: on grep's own command line it would find itself.
  tr '\0' '\n' < "/proc/$srun_pid/environ" | sed -n 's/^RINGLAB_TOKEN=//p' > "$cmdlines.token"
  echo "token-length $(tr -d '\n' < "$cmdlines.token" | wc -c)" > "$cmdlines"
  # Every command line seen while the run lasts, each with its pid: on a busy machine the four
  # tasks may not all be alive in one scan, so they are counted over all of them.
  : > "$cmdlines.all"
  # The pids whose command line is `ringlab worker --job-json ...` (srun's own line holds it too).
  # Only this run's (its token in their environment): other tests may run workers meanwhile.
  token=$(tr -d '\n' < "$cmdlines.token")
  workers_seen() {
    awk -v bin="$ringlab" '$2 == bin && $3 == "worker" && $4 == "--job-json" {print $1}' "$cmdlines.all" | sort -u |
      while read -r pid; do grep -qs "^$pid ours$" "$cmdlines.ours" && echo "$pid"; done | wc -l
  }
  : > "$cmdlines.ours"
  for _ in $(seq 300); do  # until srun's four tasks have been seen, or the run ends
    for cmdline in /proc/[0-9]*/cmdline; do
      pid=${cmdline#/proc/}; pid=${pid%/cmdline}
      # Read with builtins: a subprocess per process made one scan take longer than a whole run.
      parts=() && { mapfile -d '' -t parts < "$cmdline"; } 2> /dev/null
      line="${parts[*]}"
      echo "$pid $line"
      # Compared in the shell: on grep's command line the token would be found by this very scan.
      if [[ $line == "$ringlab worker "* ]]; then
        envs=() && { mapfile -d '' -t envs < "/proc/$pid/environ"; } 2> /dev/null
        for e in "${envs[@]}"; do [[ $e == "RINGLAB_TOKEN=$token" ]] && echo "$pid ours" >> "$cmdlines.ours"; done
      fi
    done >> "$cmdlines.all"
    seen=$(workers_seen)
    [ "$seen" -ge 4 ] && break
    kill -0 "$run" 2> /dev/null || break
    sleep 0.05
  done
  echo "workers $(workers_seen)" > "$cmdlines.workers"
  grep -F -f "$cmdlines.token" "$cmdlines.all" >> "$cmdlines"
fi
wait "$run"
EOF
out=$(timeout 240 salloc -O -n 4 bash "$work/run_in_allocation.sh" "$ringlab" "$work/srun4.json" "$work/cmdlines" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then ok "salloc -n 4 ringlab run --launcher srun -n 4 exited 0"; else echo "$out"; bad "the srun run exited $rc"; fi
if [ "$(head -1 "$work/cmdlines" 2> /dev/null)" = "token-length 32" ] && [ "$(wc -l < "$work/cmdlines")" -eq 1 ] &&
  [ "$(cat "$work/cmdlines.workers")" = "workers 4" ]; then
  ok "the run's token is in srun's environment and on no command line (srun's, its 4 workers', any)"
else bad "token check: $(cat "$work/cmdlines" "$work/cmdlines.workers" 2> /dev/null | cut -c1-300)"; fi
timeout 120 "$ringlab" run -n 4 -q --epochs 200 --samples 2048 --report "$work/local4x200.json" || bad "local 200-epoch run"
if [ $rc -eq 0 ]; then
  /usr/bin/python3 - "$work/local4x200.json" "$work/srun4.json" << 'PY' && ok "srun's run equals the local one: per-epoch MSE within 1e-6, 4 ranks' shards" || bad "srun's run differs from the local one"
import json, sys
local, srun = (json.load(open(p)) for p in sys.argv[1:3])
assert len(srun["epoch_mse"]) == 200, len(srun["epoch_mse"])
worst = max(abs(a - b) for a, b in zip(local["epoch_mse"], srun["epoch_mse"]))
assert worst <= 1e-6, worst
print(f"  per-epoch MSE, 200 epochs, largest difference {worst:g}; last: local {local['epoch_mse'][-1]:.6f}, "
      f"srun {srun['epoch_mse'][-1]:.6f}")
assert len(srun["shards"]) == 4, len(srun["shards"])
for epoch in range(200):
    assert sorted(i for rank in srun["shards"] for i in rank[epoch]) == list(range(2048)), epoch
assert srun["shards"] == local["shards"]
assert srun["allreduce_demo"]["output"] == [4.0, 8.0, 12.0]
PY
fi

# 3. srun starting the workers itself: Slurm's variables place them; rank 0 hosts the store on
# the step's first host, at the port given.
port=$(_slurm_free_port)
out=$(MASTER_PORT=$port timeout 120 srun -O -n 2 "$ringlab" worker --timeout 30 --epoch-checkpoint "$work/direct.ckpt" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then ok "srun -n 2 ringlab worker exited 0"; else echo "$out"; bad "srun -n 2 ringlab worker exited $rc"; fi
# With no controller to report to, rank 0 prints the script's lines itself: the local run's MSE.
want=$(/usr/bin/python3 -c "import json, sys; print(f'epoch 4 done, MSE over the whole dataset: {json.load(open(sys.argv[1]))[\"epoch_mse\"][3]:.6f}')" "$work/local2.json")
grep -qxF "$want" <<< "$out" && ok "srun's rank 0 printed the epochs: $want" || bad "srun's rank 0 did not print '$want': $(grep epoch <<< "$out" | tail -n1)"
if [ $rc -eq 0 ]; then
  /usr/bin/python3 - "$work/local2.json" "$work/direct.ckpt" << 'PY' && ok "srun's two workers trained as a local 2-rank run: rank 0's parameters within 1e-6" || bad "srun's workers differ from the local 2-rank run"
import json, struct, sys
local = json.load(open(sys.argv[1]))
data = open(sys.argv[2], "rb").read()
# The checkpoint: magic, checksum, a u64 header length, the JSON header, then float32 tensors.
assert data[:8] == b"RLCKPT01", data[:8]
(header_len,) = struct.unpack_from("<Q", data, 16)
header = json.loads(data[24:24 + header_len])
assert header["job"]["world_size"] == 2 and header["epoch"] == 4, (header["job"]["world_size"], header["epoch"])
n = header["parameters"]
params = struct.unpack_from(f"<{n}f", data, 24 + header_len)
want = local["final_parameters"]
assert len(want) == n, (len(want), n)
worst = max(abs(a - b) for a, b in zip(params, want))
assert worst <= 1e-6, worst
print(f"  {n} parameters after 4 epochs ({header['steps_done']} steps), largest difference {worst:g}")
PY
fi

# 4. srun killed: the controller sees its one process end, the run fails naming srun, and Slurm
# ends the step's tasks (the workers also lose the controller they report to).
cat > "$work/kill_srun.sh" << 'EOF'
#!/bin/bash
ringlab=$1 log=$2
"$ringlab" run --launcher srun -n 2 --epochs 100000 -q > "$log" 2>&1 &
run=$!
for _ in $(seq 200); do
  srun_pid=$(pgrep -P "$run" -x srun) && break
  sleep 0.05
done
[ -n "${srun_pid:-}" ] || { echo "no srun under the run" >> "$log"; kill "$run"; exit 3; }
for _ in $(seq 200); do  # until the step runs
  [ -n "$(squeue -h -s -j "$SLURM_JOB_ID" 2> /dev/null)" ] && break
  sleep 0.05
done
sleep 1
kill -KILL "$srun_pid"
started=$SECONDS
wait "$run"
echo "run-exit $? after $((SECONDS - started)) s" >> "$log"
for _ in $(seq 300); do
  [ -z "$(squeue -h -s -j "$SLURM_JOB_ID" 2> /dev/null)" ] && { echo "steps-gone after $((SECONDS - started)) s" >> "$log"; exit 0; }
  sleep 0.1
done
echo "a step still runs 30 s on: $(squeue -s -j "$SLURM_JOB_ID")" >> "$log"
EOF
timeout 180 salloc -O -n 2 bash "$work/kill_srun.sh" "$ringlab" "$work/kill.log" > /dev/null 2>&1
if grep -q "^run-exit 1 " "$work/kill.log" && grep -qF "srun failed: killed by SIGKILL" "$work/kill.log"; then
  ok "srun killed: the run failed, naming srun ($(grep -F "srun failed" "$work/kill.log" | head -1 | cut -c1-80); $(grep "^run-exit" "$work/kill.log"))"
else bad "srun killed: $(cut -c1-300 "$work/kill.log")"; fi
grep -q "^steps-gone" "$work/kill.log" && ok "and the step's ranks ended ($(grep "^steps-gone" "$work/kill.log"))" ||
  bad "the step's ranks did not end: $(tail -2 "$work/kill.log")"

# 5. scancel: Slurm ends the step with SIGTERM, passed to each rank by slurmstepd. The account
# says Slurm stopped it; the ranks said "stopped by the controller (SIGTERM)", which sent nothing.
salloc -O -n 2 "$ringlab" run --launcher srun --epochs 100000 -q --report "$work/scancel.json" > /dev/null 2> "$work/scancel.err" &
alloc=$!
for _ in $(seq 300); do  # until the step runs
  job=$(squeue -h -o %i | head -1)
  [ -n "$job" ] && [ -n "$(squeue -h -s -j "$job" 2> /dev/null)" ] && break
  sleep 0.1
done
sleep 2
scancel "$job"
wait "$alloc"
if grep -qF "srun was stopped by SIGTERM (exit code 143: Slurm stops a step so on scancel" "$work/scancel.err" &&
   grep -q "rank [01]: stopped by SIGTERM from slurmstepd, which started it" "$work/scancel.err" &&
   ! grep -q "stopped by the controller" "$work/scancel.err"; then
  ok "scancel: Slurm named as the stop, the ranks' SIGTERM as slurmstepd's"
else bad "scancel: $(cut -c1-200 "$work/scancel.err" | head -12)"; fi
# The report: not interrupted (nobody asked ringlab to stop), stopped from outside by Slurm.
fields=$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["interrupted"], r.get("stopped_by"), r.get("stopped_from_outside"))' "$work/scancel.json" 2>&1)
[[ $fields == "False None srun was stopped by SIGTERM (exit code 143: Slurm stops a step so on scancel or at the job's time limit)" ]] &&
  ok "scancel: the report says $fields" || bad "scancel: the report says: $fields"

[ $fail -eq 0 ] && echo PASS || echo FAILED
exit $fail
