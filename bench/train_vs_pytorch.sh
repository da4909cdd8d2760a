#!/usr/bin/env bash
# Per-step time of the seed's job, ringlab vs real PyTorch DDP (gloo), side by side in one run.
# Job (docs/reference-measurements.md): the seed's model and optimizer, 4096 samples, batch 32
# per rank, 5 epochs, one thread per process, the training loop only (no per-epoch evaluation).
#
#   bench/train_vs_pytorch.sh [path/to/ringlab] [world sizes...]
#
# Prints µs per step for PyTorch, ringlab on gloo and on MPI (ring and native all-reduce), and
# the ratio PyTorch / ringlab (how many times faster ringlab is). Each figure is the median of
# REPEAT runs (default 3).
set -euo pipefail
source "$(dirname "$0")/bench_lib.bash"
sizes=("${bench_args[@]:-1 2 4}")
read -r -a sizes <<<"${sizes[*]}"

torch_us() {
  for _ in $(seq "$repeat"); do
    $py "$here/tests/parity/ddp_reference.py" --world-size "$1" "${job[@]}" --out "$work/t.json" >/dev/null
    us "$work/t.json"
  done | median
}
ringlab_us() {  # world backend algorithm trace-level
  for _ in $(seq "$repeat"); do
    "$ringlab" run -q -n "$1" --backend "$2" --algorithm "$3" --trace-level "$4" "${job[@]}" --report "$work/r.json"
    us "$work/r.json"
  done | median
}

printf "%-6s %-12s %-26s %12s %10s\n" ranks "PyTorch µs" "ringlab configuration" "ringlab µs" "speed-up"
for n in "${sizes[@]}"; do
  t=$(torch_us "$n")
  for backend in gloo mpi; do
    "$ringlab" run -q --backend $backend --epochs 0 >/dev/null 2>&1 || continue
    for algorithm in ring native; do
      for level in steps chunks; do
        r=$(ringlab_us "$n" $backend $algorithm $level)
        printf "%-6s %-12.1f %-26s %12.1f %9.1fx\n" "$n" "$t" "$backend $algorithm trace=$level" "$r" \
          "$(awk -v a="$t" -v b="$r" 'BEGIN {print a / b}')"
      done
    done
  done
done
