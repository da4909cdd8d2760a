#!/usr/bin/env bash
# The speed table: ringlab's DDP step beside PyTorch's and beside the floor under it, in one run.
#
#   bench/step_floor.sh [path/to/ringlab] [world sizes...]      (default: build/app/ringlab 1 2 4)
#
# The job is the seed's (docs/reference-measurements.md): 4096 samples, batch 32 per rank,
# 5 epochs, one thread per process, the training loop only. Every figure is the median of REPEAT
# runs (default 3). First the pieces of the floor:
#   compute   µs per step of `ringlab run -n 1`: the model alone, nothing sent
#   latency   one-way time of a 4 B message, `ringlab bench pingpong` on the backend's group
#   bucket    one-way time of the DDP bucket (2737 floats = 10948 B), same run
#   bandwidth GB/s of a 16 MiB message, same run
# then one row per world size and backend:
#   floor     compute + 2(p-1)·latency + 2(p-1)/p·bucket bytes/bandwidth: the ring's 2(p-1)
#             messages one after another, each at the transport's latency, plus the ring's
#             share of the bytes at its bandwidth (the step's one bucket). It assumes a core
#             per rank. With more ranks than cores the ranks take turns on the cores and the
#             floor is measured instead, marked *: p processes of bench/bare_allreduce, each
#             burning the 1-rank step's compute in CPU time and then calling the library's own
#             all-reduce of the bucket (MPI_Allreduce, gloo::allreduce), nothing of ringlab in
#             between: what the step's work and the library reach on these cores.
#   ringlab   µs per step of `ringlab run -n p --backend B --algorithm ring --trace-level none`
#   PyTorch   µs per step of tests/parity/ddp_reference.py (PyTorch DDP on gloo, torchrun's
#             environment), the alternative ringlab is measured against
#   speed-up  PyTorch / ringlab, against the goal of docs/speed.md; a goal counts as met when the
#             speed-up reaches it, or when the floor itself misses it and ringlab is within 1.3x
#             of the floor
# A last row per world size runs gloo with RINGLAB_GLOO_MESSAGES=io-thread (every message
# through gloo's I/O thread, as before small exchanges moved on the calling thread), for reference.
# The machine load (/proc/loadavg) is printed with every row: on a shared machine every figure
# moves with it. PINGPONG=path/to/ringlab takes the ping-pong from another build.
set -euo pipefail
source "$(dirname "$0")/bench_lib.bash"
sizes=("${bench_args[@]:-1 2 4}")
read -r -a sizes <<<"${sizes[*]}"
require_world_sizes "${sizes[@]}"
bucket_bytes=10948

load() { cut -d' ' -f1-3 /proc/loadavg; }
# Whether this build has the backend: a run of no epochs on it. A run that fails for another reason
# (its library broken on this machine) stops the bench, saying why, rather than leave its rows out.
have_backend() {
  "$ringlab" run -q --backend "$1" --epochs 0 >/dev/null 2>"$work/backend.err" && return 0
  grep -q "built without" "$work/backend.err" && return 1
  bench_fail "ringlab run --backend $1 failed: $(tail -3 "$work/backend.err")"
}

ringlab_us() {  # world backend [VAR=value for the environment]
  for _ in $(seq "$repeat"); do
    env ${3:-} "$ringlab" run -q -n "$1" --backend "$2" --algorithm ring --trace-level none "${job[@]}" \
      --report "$work/r.json"
    us "$work/r.json"
  done | median
}
torch_us() {  # world size
  for _ in $(seq "$repeat"); do
    $py "$here/tests/parity/ddp_reference.py" --world-size "$1" "${job[@]}" --out "$work/t.json" >/dev/null
    us "$work/t.json"
  done | median
}
# One ping-pong run per repeat; prints "latency_us bucket_us gbps", each the median over repeats.
pingpong() {  # backend
  for _ in $(seq "$repeat"); do
    "${PINGPONG:-$ringlab}" bench pingpong --backend "$1" --sizes "4,$bucket_bytes,16M" --json "$work/p.json" >/dev/null
    $py -c "import json,sys; r=json.load(open(sys.argv[1]))['rows']; print(r[0]['one_way_us'], r[1]['one_way_us'], r[2]['gbps'])" "$work/p.json"
  done >"$work/pp.txt"
  for col in 1 2 3; do awk -v c=$col '{print $c}' "$work/pp.txt" | median; done | paste -sd' '
}
for p in "${sizes[@]}"; do
  [[ $p -le $(nproc) ]] || require_bare "$p ranks share $(nproc) cores, and the floor for that is measured with it"
done
# The measured floor with more ranks than cores (the header): µs per step, the median of REPEAT.
# 160 steps, as many as the seed's job has at 4 ranks. OpenMPI runs with and without being told
# the ranks share cores (mpi_yield_when_idle), and the quicker counts: a floor is the best the
# library does.
bare_step_mpi() {  # world yield_when_idle
  OMPI_MCA_mpi_yield_when_idle=$2 bare_run_mpi time_us "$1" $bucket_bytes 160 20 "$compute"
}
bare_step_gloo() { bare_run_gloo time_us "$1" $bucket_bytes 160 20 "$compute"; }  # world
# Fails (status 1, the reason on stderr) when a run of bench/bare_allreduce does.
shared_floor() {  # world backend
  local with without one
  : >"$work/floor.txt"
  for _ in $(seq "$repeat"); do
    if [[ $2 == mpi ]]; then
      with=$(bare_step_mpi "$1" 1) && without=$(bare_step_mpi "$1" 0) || return 1
      printf "%s\n%s\n" "$with" "$without" | sort -g | head -n1 >>"$work/floor.txt"
    else
      one=$(bare_step_gloo "$1") || return 1
      echo "$one" >>"$work/floor.txt"
    fi
  done
  median <"$work/floor.txt"
}
# The goals of docs/speed.md: PyTorch / ringlab at each world size and backend.
goal() {  # world backend
  case "$1/$2" in
    1/*) echo 20 ;;
    2/gloo) echo 10 ;;
    2/mpi) echo 30 ;;
    4/gloo) echo 3 ;;
    4/mpi) echo 30 ;;
    *) echo - ;;
  esac
}
# met: the speed-up reaches the goal. floor-bound: it does not, but the floor itself misses the
# goal (PyTorch / floor below it) and ringlab takes 1 to 1.3x the floor's time, which
# docs/speed.md counts as met. A step below its floor gets no floor-bound verdict: below a
# modelled floor (a core per rank) the ping-pong was disturbed; below a measured one (ranks
# sharing cores) ringlab beats the library's own all-reduce, and that all-reduce is then no floor
# for it (gloo's goes through its I/O thread, which ringlab's small exchanges skip).
verdict() {  # speedup goal ringlab floor world torch
  awk -v s="$1" -v g="$2" -v r="$3" -v f="$4" -v p="$5" -v t="$6" 'BEGIN {
    if (g == "-") { print "-"; exit }
    if (s >= g) { print "met"; exit }
    if (p >= 2 && f > 0 && t / f < g && r >= f && r <= 1.3 * f) { print "floor-bound"; exit }
    print "NOT MET" }'
}
shared_cores=0
disturbed=0
beaten=0

echo "# bench/step_floor.sh $(basename "$ringlab") ${sizes[*]}: median of $repeat runs each; $(nproc) cores"
load_before
# One run thrown away first: the first process after a quiet spell measured up to a third slower
# (caches, the cores' clocks), and the compute it gives goes into every floor below.
repeat=1 ringlab_us 1 gloo >/dev/null
compute=$(ringlab_us 1 gloo)
printf "# compute alone (1 rank): %.1f µs/step\n" "$compute"
declare -A lat bkt bw
for backend in gloo mpi; do
  have_backend $backend || { echo "# $backend: not in this build, its rows are left out"; continue; }
  read -r lat[$backend] bkt[$backend] bw[$backend] <<<"$(pingpong $backend)"
  printf "# %s point-to-point: one-way %.1f µs at 4 B, %.1f µs at %d B; %.2f GB/s at 16 MiB\n" \
    $backend "${lat[$backend]}" "${bkt[$backend]}" "$bucket_bytes" "${bw[$backend]}"
done

printf "%-5s %-16s %10s %12s %12s %9s %6s %12s %13s %6s\n" ranks backend "floor µs" "ringlab µs" "PyTorch µs" \
  speed-up goal verdict ringlab/floor load
row() {  # world label backend ringlab_us torch_us
  local p=$1 label=$2 backend=$3 r=$4 t=$5 floor=0 ratio=-
  if [[ $p -eq 1 ]]; then
    floor=$compute
  elif [[ $p -gt $(nproc) ]]; then
    floor=${shared[$backend]}
  elif [[ -n "${lat[$backend]:-}" ]]; then
    floor=$(awk -v c="$compute" -v l="${lat[$backend]}" -v g="${bw[$backend]}" -v b="$bucket_bytes" -v p="$p" \
      'BEGIN {print c + 2*(p-1)*l + 2*(p-1)/p * b / (g*1e3)}')
  fi
  local speedup g floor_text
  speedup=$(awk -v a="$t" -v b="$r" 'BEGIN {print a / b}')
  g=$(goal "$p" "$label")
  floor_text=$(awk -v f="$floor" 'BEGIN {printf (f > 0 ? "%.1f" : "-"), f}')
  if [[ $p -gt $(nproc) ]]; then
    floor_text="$floor_text*"
    shared_cores=1
    awk -v f="$floor" -v r="$r" 'BEGIN {exit !(f > r)}' && beaten=1
  elif awk -v f="$floor" -v r="$r" -v p="$p" 'BEGIN {exit !(p >= 2 && f > r)}'; then
    disturbed=1
  fi
  [[ $floor != 0 ]] && ratio=$(awk -v a="$r" -v b="$floor" 'BEGIN {printf "%.2fx", a / b}')
  printf "%-5s %-16s %9s %11.1f %11.1f %8.1fx %6s %12s %13s %6s\n" "$p" "$label" "$floor_text" "$r" "$t" \
    "$speedup" "$g$([[ $g != - ]] && echo x)" "$(verdict "$speedup" "$g" "$r" "$floor" "$p" "$t")" "$ratio" \
    "$(cut -d' ' -f1 /proc/loadavg)"
}
for p in "${sizes[@]}"; do
  t=$(torch_us "$p")
  if [[ $p -eq 1 ]]; then
    row 1 - gloo "$compute" "$t"
    continue
  fi
  declare -A shared=()
  for backend in gloo mpi; do
    [[ -n "${lat[$backend]:-}" ]] || continue
    if [[ $p -gt $(nproc) ]]; then
      shared[$backend]=$(shared_floor "$p" $backend) ||
        bench_fail "the floor of $p ranks on $backend could not be measured (above)"
    fi
    row "$p" $backend $backend "$(ringlab_us "$p" $backend)" "$t"
  done
  [[ -n "${lat[gloo]:-}" ]] &&
    row "$p" "gloo, io-thread" gloo "$(ringlab_us "$p" gloo RINGLAB_GLOO_MESSAGES=io-thread)" "$t"
done
echo "# verdict: met = the speed-up reaches the goal; floor-bound = within 1.3x of a floor that rules the goal out"
[[ $shared_cores -eq 1 ]] &&
  echo "# floor*: more ranks than cores, so measured: $bucket_bytes B through the library's own all-reduce after the step's compute (bench/bare_allreduce)"
[[ $beaten -eq 1 ]] &&
  echo "# floor* above ringlab's step: ringlab beats the library's own all-reduce there, which is then no floor (no floor-bound verdict from it)"
[[ $disturbed -eq 1 ]] &&
  echo "# WARNING: a floor above the measured step: a ping-pong was disturbed (see the load); run again on a quieter machine"
echo "# load average after: $(load)"
