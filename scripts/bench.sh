#!/usr/bin/env bash
# The timing checks and the side-by-side comparisons, each printing its table: the perf tier of
# the tests (the cost models against measured all-reduces, the short soak's memory), ringlab's
# step against PyTorch DDP, the all-reduce bandwidth against the backends' own, and the
# simulator's speed. Run it on a quiet machine: every figure is a ratio taken in the same run,
# but a busy neighbour still moves them.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
ringlab=build/app/ringlab
status=0
section() { printf '\n== %s\n' "$1"; }

section "perf tier: cost models against measured all-reduces, short soak (ctest -L perf)"
ctest --test-dir build -L perf --timeout 1800 -V 2>&1 | grep -v '^[0-9]*: Test command\|^[0-9]*: Working Directory\|^[0-9]*: Environment' || status=1

section "training step, ringlab against PyTorch DDP (bench/train_vs_pytorch.sh)"
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  bench/train_vs_pytorch.sh "$ringlab" 1 2 4 || status=1
else
  echo "SKIP: PyTorch is not installed for /usr/bin/python3 (apt-get install python3-torch)"
fi

for backend in gloo mpi; do
  section "16 MiB all-reduce, 2 ranks, $backend: ringlab's ring against the backend's own"
  if "$ringlab" run -q --backend "$backend" --epochs 0 > /dev/null 2>&1; then
    "$ringlab" bench allreduce --backend "$backend" --world-size 2 -b 16M -e 16M --algorithm both -n 10 -w 3 || status=1
  else
    echo "SKIP: the $backend backend is not built in"
  fi
done

section "simulator speed (build/bench/sim_speed)"
build/bench/sim_speed || status=1
exit $status
