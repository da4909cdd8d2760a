#!/usr/bin/env bash
# The GPU check: everything ringlab can only verify on a machine with an NVIDIA GPU, in one go,
# into one log. Meant for a fresh machine with the driver, nvcc and NCCL (and the Debian build
# dependencies of docs/architecture.md), no network, run as root from the repository root:
#
#   bash scripts/gpu-check.sh            # log: $OUT/gpu-check.log when $OUT is set, else ./gpu-check.log
#
# Steps (each bounded by a timeout, so the whole check stays under about 5 minutes on one H200):
#   1. the machine: GPUs, driver, nvcc, NCCL
#   2. configure and build with CUDA for sm_90 only (RINGLAB_CUDA_ARCH to change), -j16
#   3. the GPU unit tests: test_cuda_mlp (the MLP against the CPU engine) and test_nccl_ring
#   4. the seed's job on NCCL against the same job on the CPU: per-epoch MSE within 1e-4,
#      and the time per step of both
#   5. ringlab bench allreduce on NCCL, ring and native, 4 B to 256 MiB
# The last lines of the log are a summary: one PASS / FAIL / SKIP line per check.
# Environment: RINGLAB_BUILD_DIR (default build-gpu), RINGLAB_SKIP_BUILD=1 to reuse a build,
# RINGLAB_CUDA_ARCH (default 90), RINGLAB_JOBS (default 16).
set -u -o pipefail

cd "$(dirname "$0")/.." || exit 2
SOURCE_DIR=$(pwd)
LOG="${OUT:+$OUT/}gpu-check.log"
BUILD_DIR="${RINGLAB_BUILD_DIR:-build-gpu}"
ARCH="${RINGLAB_CUDA_ARCH:-90}"
JOBS="${RINGLAB_JOBS:-16}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SUMMARY=()
FAILED=0

: > "$LOG"
log() { echo "$*" | tee -a "$LOG"; }
section() { log ""; log "=== $* ($(date -u +%H:%M:%S)) ==="; }
result() {  # result PASS|FAIL|SKIP "what"
  SUMMARY+=("$1  $2")
  [ "$1" = FAIL ] && FAILED=1
  log "--> $1: $2"
}
# run SECONDS command...: runs it with a timeout, its output into the log; returns its status.
run() {
  local limit=$1
  shift
  log "\$ $*"
  timeout --kill-after=10 "$limit" "$@" >> "$LOG" 2>&1
  local rc=$?
  [ $rc -eq 124 ] && log "(timed out after ${limit}s)"
  return $rc
}

# run_to FILE SECONDS command...: the same, its output also kept in FILE.
run_to() {
  local file=$1
  shift
  local limit=$1
  shift
  log "\$ $*"
  timeout --kill-after=10 "$limit" "$@" > "$file" 2>&1
  local rc=$?
  cat "$file" >> "$LOG"
  [ $rc -eq 124 ] && log "(timed out after ${limit}s)"
  return $rc
}

finish() {
  section "summary"
  for line in "${SUMMARY[@]}"; do log "$line"; done
  log "gpu-check: $([ $FAILED -eq 0 ] && echo 'all checks passed' || echo 'SOME CHECKS FAILED')"
  exit $FAILED
}

# ---- 1. the machine --------------------------------------------------------------------------
section "machine"
log "date: $(date -u)   host: $(hostname)   source: $SOURCE_DIR   commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
run 30 nvidia-smi || log "(nvidia-smi failed)"
run 30 nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv || true
command -v nvcc > /dev/null || export PATH="$PATH:/usr/local/cuda/bin"
run 30 nvcc --version || log "(nvcc not found)"
NCCL_HEADER=$(ls /usr/local/cuda/include/nccl.h /usr/include/nccl.h 2>/dev/null | head -1)
[ -n "$NCCL_HEADER" ] && log "NCCL header $NCCL_HEADER: $(grep -E '#define NCCL_(MAJOR|MINOR|PATCH) ' "$NCCL_HEADER" | awk '{printf "%s=%s ", $2, $3}')"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
log "GPUs: ${GPUS:-0}"
for tool in cmake g++ ; do command -v $tool > /dev/null || log "missing build tool: $tool"; done

# ---- 2. build -------------------------------------------------------------------------------
section "build (CUDA arch $ARCH, -j$JOBS)"
GENERATOR="Unix Makefiles"
command -v ninja > /dev/null && GENERATOR=Ninja
if [ "${RINGLAB_SKIP_BUILD:-0}" = 1 ] && [ -x "$BUILD_DIR/app/ringlab" ]; then
  log "reusing the build in $BUILD_DIR"
  result PASS "build (reused $BUILD_DIR)"
elif run 120 cmake -S "$SOURCE_DIR" -B "$BUILD_DIR" -G "$GENERATOR" -DCMAKE_BUILD_TYPE=Release \
       -DRINGLAB_WITH_CUDA=ON -DRINGLAB_WITH_GUI=OFF -DCMAKE_CUDA_ARCHITECTURES="$ARCH" &&
     run 420 cmake --build "$BUILD_DIR" -j"$JOBS" --target ringlab test_cuda_mlp test_nccl_ring; then
  result PASS "build with CUDA (sm_$ARCH)"
else
  result FAIL "build with CUDA: see the cmake output above"
  finish
fi
RINGLAB="$BUILD_DIR/app/ringlab"

# ---- 3. GPU unit tests ----------------------------------------------------------------------
section "GPU unit tests"
export NCCL_DEBUG="${NCCL_DEBUG:-WARN}"
for t in test_cuda_mlp test_nccl_ring; do
  # Run directly rather than through ctest, so a skip (exit 77) and its reason are plain.
  run 180 "$BUILD_DIR/tests/$t" --duration=true
  rc=$?
  case $rc in
    0) result PASS "$t" ;;
    77) result FAIL "$t skipped on a GPU machine: $(grep -m1 '^SKIP' "$LOG" || echo '?')" ;;
    *) result FAIL "$t (exit $rc)" ;;
  esac
done

# ---- 4. the seed's job: NCCL against the CPU -------------------------------------------------
section "the seed's job: ringlab run --backend nccl against the CPU engine"
# The epoch lines of the report: "epoch 1 done, MSE over the whole dataset: 0.900974".
epoch_mse() { grep -E '^epoch [0-9]+ done' "$1" | awk '{print $NF}'; }
us_per_step() { grep -o '"us_per_step": *[0-9.eE+-]*' "$1" | head -1 | sed 's/.*: *//'; }
CPU_BACKEND=gloo
if ! run_to "$WORK/cpu.txt" 120 "$RINGLAB" run --backend gloo --report "$WORK/cpu.json"; then
  CPU_BACKEND=mpi
  run_to "$WORK/cpu.txt" 120 "$RINGLAB" run --backend mpi --report "$WORK/cpu.json"
fi
run_to "$WORK/nccl.txt" 120 "$RINGLAB" run --backend nccl --report "$WORK/nccl.json"
NCCL_RC=$?
epoch_mse "$WORK/cpu.txt" > "$WORK/cpu.mse"
epoch_mse "$WORK/nccl.txt" > "$WORK/nccl.mse"
if [ $NCCL_RC -ne 0 ] || [ ! -s "$WORK/nccl.mse" ]; then
  # Needs make_process_group to build NcclProcessGroup and the worker to call train_rank_cuda.
  result FAIL "ringlab run --backend nccl (exit $NCCL_RC, no epoch MSE lines)"
elif [ ! -s "$WORK/cpu.mse" ]; then
  result FAIL "the CPU reference run ($CPU_BACKEND) printed no epoch MSE lines"
else
  log "epoch  $CPU_BACKEND        nccl"
  paste "$WORK/cpu.mse" "$WORK/nccl.mse" | awk '{printf "%-6d %-10s %-10s\n", NR, $1, $2}' | tee -a "$LOG"
  if paste "$WORK/cpu.mse" "$WORK/nccl.mse" | awk 'NF != 2 { bad = 1 } { d = $1 - $2; if (d < 0) d = -d; if (d > 1e-4) bad = 1 } END { exit bad }'; then
    result PASS "seed job: nccl per-epoch MSE within 1e-4 of $CPU_BACKEND"
  else
    result FAIL "seed job: nccl per-epoch MSE differs from $CPU_BACKEND by more than 1e-4"
  fi
  log "us per step: $CPU_BACKEND $(us_per_step "$WORK/cpu.json")   nccl $(us_per_step "$WORK/nccl.json")"
fi

# ---- 5. all-reduce bandwidth on NCCL ----------------------------------------------------------
section "ringlab bench allreduce --backend nccl"
WORLD=$(( ${GPUS:-1} < 1 ? 1 : (${GPUS:-1} > 8 ? 8 : ${GPUS:-1}) ))
if run 150 "$RINGLAB" bench allreduce --backend nccl --world-size "$WORLD" --algorithm both -b 4 -e 256M \
     --json "$WORK/bench.json"; then
  result PASS "bench allreduce on NCCL, $WORLD rank(s), ring and native, 4 B - 256 MiB"
  [ -n "${OUT:-}" ] && cp "$WORK/bench.json" "$OUT/gpu-bench-allreduce.json"
else
  # The sweep needs its buffers in GPU memory on NCCL (engine/dist/allreduce_bench.cpp).
  result FAIL "bench allreduce on NCCL (see above; the NCCL group refuses host buffers for the ring)"
fi

finish
