#!/usr/bin/env bash
# ringlab's all-reduce at a large size against the libraries' own all-reduce called from a plain
# program (bench/bare_allreduce.cpp: MPI_Allreduce or gloo::allreduce in a loop), in one run.
#
#   bench/allreduce_vs_bare.sh [path/to/ringlab] [bytes]     (default: build/app/ringlab 16M)
#
# Each round runs, one after another (every other round in the reverse order): the bare MPI loop,
# `ringlab bench allreduce --backend mpi` for the ring alone and for the native all-reduce alone
# (each program loops over one all-reduce, as the bare one does), the same three over gloo;
# REPEAT rounds (default 5), the median of each. 2 ranks, ITERS timed iterations (default 50)
# after 5 warm-up ones, every result checked against the serial sum. Each round also measures the
# floor under a 2-rank all-reduce on each transport: whatever its algorithm, each rank must send
# the other a whole tensor's worth of bytes and receive as many (its half to be reduced, then the
# reduced half back; or the whole tensor at once), so the all-reduce cannot be quicker than one
# exchange of the whole tensor (`ringlab bench pingpong`'s exchange: both ranks send at once, no
# arithmetic; in the ring's segments or as one message, whichever is quicker). A row that beats
# its floor means the exchanges were disturbed, and the script says so. The bare MPI loop runs
# with the MCA settings ringlab's launcher gives its ranks on one machine (docs/launchers.md), so
# the two differ only in what happens inside the processes.
# Printed: busbw of each, and the ratios against the goals of docs/speed.md.
set -euo pipefail
: "${REPEAT:=5}"  # five rounds unless told: one run of a 16 MiB all-reduce varies by ±10% here
source "$(dirname "$0")/bench_lib.bash"
require_args_at_most 1 "bench/allreduce_vs_bare.sh [path/to/ringlab] [bytes]"
bytes_text=${bench_args[0]:-16M}
iters=${ITERS:-50}
[[ "$iters" =~ ^[1-9][0-9]*$ ]] || bench_fail "ITERS='$iters': expected a whole number of iterations, at least 1"
[[ "$bytes_text" =~ ^[1-9][0-9]*[KMG]?$ ]] ||
  bench_fail "size '$bytes_text': expected 4K to 1G, as bytes with an optional K, M or G (e.g. 16M)"
require_bare
bytes=$($py -c "import sys; t=sys.argv[1]; u={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(t[:-1])*u[t[-1]] if t[-1].isalpha() else int(t))" "$bytes_text")
[[ $bytes -ge 4096 && $bytes -le $((1 << 30)) ]] || bench_fail "size '$bytes_text' ($bytes bytes): expected 4K to 1G"
[[ $((bytes % 4)) -eq 0 ]] ||
  bench_fail "size '$bytes_text' ($bytes bytes): not a whole number of floats, expected a multiple of 4 bytes"


bare_mpi() { bare_run_mpi busbw_gbps 2 "$bytes" "$iters" 5; }
bare_gloo() { bare_run_gloo busbw_gbps 2 "$bytes" "$iters" 5; }
# backend algorithm -> busbw: ringlab running that one all-reduce in a loop, as the bare program
# runs its one, so that each comparison is between two programs doing the same thing.
ringlab_alone() {
  "$ringlab" bench allreduce --backend "$1" --algorithm "$2" -b "$bytes" -e "$bytes" -n "$iters" -w 5 \
    --json "$work/b.json" >/dev/null
  $py -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'][0][sys.argv[2]]['busbw_gbps'])" "$work/b.json" "$2"
}
# backend -> busbw of the floor and the µs of the sums: busbw of 2 ranks is bytes / time, here the
# exchange's time, the quicker of the exchange in the ring's segments and in one message; the sums
# (each rank adds half the tensor, timed on their own) come with that exchange.
floor_of() {
  local cut
  for cut in auto 0; do
    "$ringlab" bench pingpong --backend "$1" --sizes "$bytes" -n "$iters" -w 5 --exchange-segment-bytes $cut \
      --json "$work/p.json" >/dev/null
    $py -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(r['exchange_gbps'], r['sum_us'])" "$work/p.json"
  done | sort -g | tail -n1
}

echo "# bench/allreduce_vs_bare.sh $(basename "$ringlab") $bytes_text: 2 ranks, $iters iterations, median of $repeat round$([[ $repeat -gt 1 ]] && echo s); $(nproc) cores"
load_before
: >"$work/rounds.txt"
# One round: each of the eight programs once; every other round in the reverse order, so that
# none of them always runs first (or last) on a machine whose speed drifts.
measures=("m bare_mpi" "mr ringlab_alone mpi ring" "mn ringlab_alone mpi native" "mf floor_of mpi"
  "g bare_gloo" "gr ringlab_alone gloo ring" "gn ringlab_alone gloo native" "gf floor_of gloo")
for round in $(seq "$repeat"); do
  declare -A got=()
  order=$(seq 0 $((${#measures[@]} - 1)))
  ((round % 2 == 0)) && order=$(seq $((${#measures[@]} - 1)) -1 0)
  for i in $order; do
    read -r key cmd <<<"${measures[$i]}"
    got[$key]=$($cmd)
  done
  echo "${got[m]} ${got[mr]} ${got[mn]} ${got[g]} ${got[gr]} ${got[gn]} ${got[mf]% *} ${got[gf]% *}" \
    "${got[mf]#* } ${got[gf]#* }" >>"$work/rounds.txt"
done
col() { awk -v c="$1" '{print $c}' "$work/rounds.txt" | median; }
bare_m=$(col 1) ring_m=$(col 2) native_m=$(col 3) bare_g=$(col 4) ring_g=$(col 5) native_g=$(col 6)
floor_m=$(col 7) floor_g=$(col 8) sums_m=$(col 9) sums_g=$(col 10)

printf "%-48s %12s %10s %8s %12s %10s\n" "all-reduce of $bytes_text, 2 ranks" "busbw GB/s" "vs bare" goal verdict "vs floor"
# A floor is disturbed when something on the same transport beat it: the exchanges were slowed
# by other work on the machine, and that floor says nothing.
disturbed_m=$(awk -v f="$floor_m" -v a="$bare_m" -v b="$native_m" -v c="$ring_m" 'BEGIN {print (a > f || b > f || c > f)}')
disturbed_g=$(awk -v f="$floor_g" -v a="$bare_g" -v b="$native_g" -v c="$ring_g" 'BEGIN {print (a > f || b > f || c > f)}')
# met: the ratio reaches the goal. floor-bound: it does not, but the goal asks for more than the
# floor allows (goal x bare above the floor) and this all-reduce takes at most 1.3x the floor's
# time, which docs/speed.md counts as met; never with a disturbed floor.
verdict() {  # busbw bare goal floor disturbed
  awk -v b="$1" -v bare="$2" -v g="$3" -v f="$4" -v d="$5" 'BEGIN {
    if (b >= g * bare) { print "met"; exit }
    if (!d && g * bare > f && b <= f && f <= 1.3 * b) { print "floor-bound"; exit }
    print "NOT MET" }'
}
line() {  # label busbw bare goal floor disturbed
  local ratio verdict=- to_floor=-
  ratio=$(awk -v a="$2" -v b="$3" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "-"}')
  [[ $4 != - && $3 != 0 ]] && verdict=$(verdict "$2" "$3" "$4" "$5" "$6")
  [[ $5 != - ]] && to_floor=$(awk -v f="$5" -v b="$2" 'BEGIN {if (f > 0) printf "%.2fx", b / f; else printf "-"}')
  printf "%-48s %12.3f %9sx %8s %12s %10s\n" "$1" "$2" "$ratio" "$4$([[ $4 != - ]] && echo x)" "$verdict" "$to_floor"
}
line "floor over MPI: one exchange of the tensor" "$floor_m" "$bare_m" - - 0
line "bare MPI_Allreduce loop" "$bare_m" "$bare_m" - "$floor_m" "$disturbed_m"
line "ringlab native (MPI_Allreduce)" "$native_m" "$bare_m" 0.95 "$floor_m" "$disturbed_m"
line "ringlab ring over MPI" "$ring_m" "$bare_m" 0.9 "$floor_m" "$disturbed_m"
line "floor over gloo: one exchange of the tensor" "$floor_g" "$bare_g" - - 0
line "bare gloo::allreduce loop" "$bare_g" "$bare_g" - "$floor_g" "$disturbed_g"
line "ringlab native (gloo::allreduce)" "$native_g" "$bare_g" - "$floor_g" "$disturbed_g"
line "ringlab ring over gloo" "$ring_g" "$bare_g" 1.5 "$floor_g" "$disturbed_g"
# The floor is the bytes alone; an all-reduce also adds. How much of the ring's time that is:
sums_line() {  # transport sums_us ring_busbw
  local ring_us
  ring_us=$(awk -v r="$3" -v b="$bytes" 'BEGIN {printf "%.0f", (r > 0 ? b / (r * 1e3) : 0)}')
  awk -v t="$1" -v s="$2" -v u="$ring_us" 'BEGIN {
    printf "# the sums over %s: each rank adds half the tensor in %.0f µs, %.0f%% of the time of the ring (%d µs)\n",
      t, s, (u > 0 ? 100 * s / u : 0), u }'
}
sums_line MPI "$sums_m" "$ring_m"
sums_line gloo "$sums_g" "$ring_g"
echo "# vs floor: busbw / the floor's busbw on the same transport (1.00x: at the floor; the time is the inverse)"
echo "# verdict: met = reaches the goal; floor-bound = the goal x bare is beyond the floor, and this takes at most"
echo "#   1.3x the floor's time (vs floor 0.77x to 1.00x)"
[[ $disturbed_m == 1 ]] && echo "# WARNING: something beat the floor over MPI: its exchanges were disturbed (see the load); no floor-bound verdict there"
[[ $disturbed_g == 1 ]] && echo "# WARNING: something beat the floor over gloo: its exchanges were disturbed (see the load); no floor-bound verdict there"
[[ $disturbed_g == 0 ]] && awk -v f="$floor_g" -v b="$bare_g" 'BEGIN {exit !(f < 1.5 * b)}' &&
  echo "# over gloo, 1.5x the bare loop ($(awk -v b="$bare_g" 'BEGIN {printf "%.3f", 1.5 * b}') GB/s) is beyond the floor ($(printf %.3f "$floor_g") GB/s)"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
