#!/usr/bin/env bash
# The floor under ringlab's gloo step, measured in one run beside the step itself and PyTorch's.
#
#   bench/step_floor.sh [path/to/ringlab] [world sizes...]      (default: build/app/ringlab 2 4)
#
# The job is the seed's (docs/reference-measurements.md): 4096 samples, batch 32 per rank,
# 5 epochs, one thread per process, the training loop only. Printed, each the median of REPEAT
# runs (default 3):
#   compute   µs per step of `ringlab run -n 1`: the model alone, nothing sent
#   latency   one-way time of a 4 B message, `ringlab bench pingpong` on the gloo group
#   bucket    one-way time of the DDP bucket (2737 floats = 10948 B), same run
#   bandwidth GB/s of a 16 MiB message, same run
#   floor     compute + 2(p-1)·latency + 2(p-1)/p·bucket bytes/bandwidth: the ring's 2(p-1)
#             messages one after another, each at the transport's latency, plus the ring's
#             share of the bytes at its bandwidth (the step's one bucket)
#   ringlab   µs per step of `ringlab run -n p --backend gloo --algorithm ring`
#   PyTorch   µs per step of tests/parity/ddp_reference.py (PyTorch DDP on gloo)
# and the ratios PyTorch/ringlab (the goal: ≥ 10) and ringlab/floor (how far from the floor).
# PINGPONG=path/to/ringlab takes the ping-pong from another build (one that has `bench pingpong`),
# to put the floor under an older binary's step.
# The machine load (/proc/loadavg) is printed before and after: on a shared machine every
# figure moves with it.
set -euo pipefail
source "$(dirname "$0")/bench_lib.bash"
sizes=("${bench_args[@]:-2 4}")
read -r -a sizes <<<"${sizes[*]}"
bucket_bytes=10948

load() { cut -d' ' -f1-3 /proc/loadavg; }

ringlab_us() {  # world size
  for _ in $(seq "$repeat"); do
    "$ringlab" run -q -n "$1" --backend gloo --algorithm ring --trace-level none "${job[@]}" --report "$work/r.json"
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
pingpong() {
  for _ in $(seq "$repeat"); do
    "${PINGPONG:-$ringlab}" bench pingpong --backend gloo --sizes "4,$bucket_bytes,16M" --json "$work/p.json" >/dev/null
    $py -c "import json,sys; r=json.load(open(sys.argv[1]))['rows']; print(r[0]['one_way_us'], r[1]['one_way_us'], r[2]['gbps'])" "$work/p.json"
  done >"$work/pp.txt"
  for col in 1 2 3; do awk -v c=$col '{print $c}' "$work/pp.txt" | median; done | paste -sd' '
}

echo "# bench/step_floor.sh $(basename "$ringlab") ${sizes[*]}: median of $repeat runs each; $(nproc) cores"
echo "# load average before: $(load)"
compute=$(ringlab_us 1)
read -r latency bucket gbps <<<"$(pingpong)"
printf "# compute alone (1 rank): %.1f µs/step\n" "$compute"
printf "# gloo point-to-point: one-way %.1f µs at 4 B, %.1f µs at %d B; %.2f GB/s at 16 MiB\n" \
  "$latency" "$bucket" "$bucket_bytes" "$gbps"
printf "%-6s %10s %10s %10s %10s %12s %14s\n" ranks "floor µs" "ringlab µs" "PyTorch µs" "load" "PyT/ringlab" "ringlab/floor"
for p in "${sizes[@]}"; do
  floor=$(awk -v c="$compute" -v l="$latency" -v g="$gbps" -v b="$bucket_bytes" -v p="$p" \
    'BEGIN {print c + 2*(p-1)*l + 2*(p-1)/p * b / (g*1e3)}')
  r=$(ringlab_us "$p")
  t=$(torch_us "$p")
  printf "%-6s %10.1f %10.1f %10.1f %10s %11.1fx %13.2fx\n" "$p" "$floor" "$r" "$t" "$(cut -d' ' -f1 /proc/loadavg)" \
    "$(awk -v a="$t" -v b="$r" 'BEGIN {print a / b}')" "$(awk -v a="$r" -v b="$floor" 'BEGIN {print a / b}')"
done
echo "# load average after: $(load)"
