#!/usr/bin/env bash
# ringlab's all-reduce at a large size against the libraries' own all-reduce called from a plain
# program (bench/bare_allreduce.cpp: MPI_Allreduce or gloo::allreduce in a loop), in one run.
#
#   bench/allreduce_vs_bare.sh [path/to/ringlab] [bytes]     (default: build/app/ringlab 16M)
#
# Each round runs, one after another: the bare MPI loop, `ringlab bench allreduce --backend mpi`
# (ring and native in turns), the bare gloo loop, `ringlab bench allreduce --backend gloo`;
# REPEAT rounds (default 3), the median of each. 2 ranks, ITERS timed iterations (default 20)
# after 5 warm-up ones, every result checked against the serial sum. The bare MPI loop runs with
# the MCA settings ringlab's launcher gives its ranks on one machine (docs/launchers.md), so the
# two differ only in what happens inside the processes.
# Printed: busbw of each, and the ratios against the goals of docs/speed.md.
set -euo pipefail
source "$(dirname "$0")/bench_lib.bash"
bytes_text=${bench_args[0]:-16M}
iters=${ITERS:-20}
[[ "$iters" =~ ^[1-9][0-9]*$ ]] || bench_fail "ITERS='$iters': expected a whole number of iterations, at least 1"
[[ "$bytes_text" =~ ^[1-9][0-9]*[KMG]?$ ]] ||
  bench_fail "size '$bytes_text': expected bytes as a whole number with an optional K, M or G (e.g. 16M)"
bare=${BARE:-$(dirname "$ringlab")/../bench/bare_allreduce}
[[ -x "$bare" ]] || { echo "allreduce_vs_bare.sh: $bare is not built (cmake --build build --target bare_allreduce)" >&2; exit 2; }
bytes=$($py -c "import sys; t=sys.argv[1]; u={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(t[:-1])*u[t[-1]] if t[-1].isalpha() else int(t))" "$bytes_text")
[[ $bytes -ge 4096 && $((bytes % 4)) -eq 0 && $bytes -le $((1 << 30)) ]] ||
  bench_fail "size '$bytes_text': expected 4K to 1G, a whole number of floats (a multiple of 4 bytes)"

export OMPI_MCA_plm=isolated OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
  OMPI_MCA_btl_base_warn_component_unused=0
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

bare_mpi() { mpirun --oversubscribe -np 2 --bind-to none "$bare" mpi "$bytes" "$iters" 5 | field_of - busbw_gbps; }
bare_gloo() {
  local dir
  dir=$(mktemp -d -p "$work")
  RANK=1 WORLD_SIZE=2 STORE_DIR=$dir "$bare" gloo "$bytes" "$iters" 5 >/dev/null &
  RANK=0 WORLD_SIZE=2 STORE_DIR=$dir "$bare" gloo "$bytes" "$iters" 5 | field_of - busbw_gbps
  wait
}
# ringlab backend -> "ring_busbw native_busbw"
ringlab_pair() {
  "$ringlab" bench allreduce --backend "$1" -b "$bytes" -e "$bytes" -n "$iters" -w 5 --json "$work/b.json" >/dev/null
  $py -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(r['ring']['busbw_gbps'], r['native']['busbw_gbps'])" "$work/b.json"
}
field_of() { $py -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])[sys.argv[2]])" - "$2"; }

echo "# bench/allreduce_vs_bare.sh $(basename "$ringlab") $bytes_text: 2 ranks, $iters iterations, median of $repeat rounds; $(nproc) cores"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/rounds.txt"
for _ in $(seq "$repeat"); do
  m=$(bare_mpi)
  read -r mr mn <<<"$(ringlab_pair mpi)"
  g=$(bare_gloo)
  read -r gr gn <<<"$(ringlab_pair gloo)"
  echo "$m $mr $mn $g $gr $gn" >>"$work/rounds.txt"
done
col() { awk -v c="$1" '{print $c}' "$work/rounds.txt" | median; }
bare_m=$(col 1) ring_m=$(col 2) native_m=$(col 3) bare_g=$(col 4) ring_g=$(col 5) native_g=$(col 6)

printf "%-40s %12s %10s %8s %8s\n" "all-reduce of $bytes_text, 2 ranks" "busbw GB/s" "vs bare" goal verdict
line() {  # label busbw bare goal
  local ratio verdict=-
  ratio=$(awk -v a="$2" -v b="$3" 'BEGIN {if (b > 0) printf "%.2f", a / b; else printf "-"}')
  [[ $4 != - && $ratio != - ]] && verdict=$(awk -v r="$ratio" -v g="$4" 'BEGIN {print (r >= g ? "met" : "NOT MET")}')
  printf "%-40s %12.3f %9sx %8s %8s\n" "$1" "$2" "$ratio" "$4$([[ $4 != - ]] && echo x)" "$verdict"
}
line "bare MPI_Allreduce loop" "$bare_m" "$bare_m" -
line "ringlab native (MPI_Allreduce)" "$native_m" "$bare_m" 0.95
line "ringlab ring over MPI" "$ring_m" "$bare_m" 0.9
line "bare gloo::allreduce loop" "$bare_g" "$bare_g" -
line "ringlab native (gloo::allreduce)" "$native_g" "$bare_g" -
line "ringlab ring over gloo" "$ring_g" "$bare_g" 1.5
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
