#!/usr/bin/env bash
# A short scripts/soak.sh for every CI run: 16 ranks x 200 steps and 2 ranks x 20,000 steps with
# --report and --metrics. Fails if a step is lost or any process (controller or worker) grows
# by more than 5 MB after warm-up. The full soak (16 x 2,000, 2 x 100,000) is scripts/soak.sh.
#
#   bash soak_short.sh <ringlab binary> <source dir>
set -uo pipefail
bin=$(realpath "${1:?usage: soak_short.sh <ringlab> <source dir>}")
src=${2:?usage: soak_short.sh <ringlab> <source dir>}
if [[ -n "${RINGLAB_UNDER_SANITIZER:-}" ]]; then
  echo "SKIP: resident memory under $RINGLAB_UNDER_SANITIZER is the sanitizer's, not ringlab's"
  exit 77
fi
command -v python3 > /dev/null || { echo "SKIP: python3 samples the processes' memory"; exit 77; }
dir=$(mktemp -d /tmp/ringlab-soak-short-XXXXXX)
trap 'rm -rf "$dir"' EXIT
RINGLAB_SOAK_DIR=$dir RINGLAB_SOAK_STEPS_16=200 RINGLAB_SOAK_STEPS_2=20000 bash "$src/scripts/soak.sh" "$bin"
