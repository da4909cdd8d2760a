#!/usr/bin/env bash
# Parity with real PyTorch DDP (1.13, gloo): the seed's job generalised to N ranks, for world
# sizes 2, 3 and 4, ringlab on both backends and both algorithms. Identical shards, per-epoch
# MSE within 1e-5. Skips (exit 77) when Debian's python3-torch is not installed.
set -euo pipefail
ringlab=$1
src=$2
py=/usr/bin/python3
if ! $py -c "import torch" 2>/dev/null; then
  echo "SKIP: PyTorch is not installed for $py (apt-get install python3-torch)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
backends=(gloo)
"$ringlab" run --backend mpi --epochs 0 -q >/dev/null 2>&1 && backends+=(mpi) || echo "note: mpi backend not built, testing gloo only"
failures=0
for n in 2 3 4; do
  for extra in "" "--no-shuffle --drop-last --samples 250"; do
    # shellcheck disable=SC2086
    $py "$src/tests/parity/ddp_reference.py" --world-size $n $extra --out "$work/torch.json"
    for backend in "${backends[@]}"; do
      for algorithm in ring native; do
        echo "== world size $n, $backend, $algorithm ${extra:+($extra)}"
        # shellcheck disable=SC2086
        "$ringlab" run -q --world-size $n --backend $backend --algorithm $algorithm $extra --report "$work/ringlab.json"
        $py "$src/tests/parity/compare.py" "$work/ringlab.json" "$work/torch.json" 1e-5 || failures=$((failures + 1))
      done
    done
  done
done
echo "parity: $failures failing configuration(s)"
[ "$failures" -eq 0 ]
