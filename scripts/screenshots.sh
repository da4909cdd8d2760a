#!/usr/bin/env bash
# Renders the README's pictures (docs/images/*.png) from real runs of the app under Xvfb, and
# checks each frame with the layout audit (no word cut, overlapping or covered) before keeping it.
#
#   scripts/screenshots.sh [build-dir]     (default: build; run scripts/build.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/app/ringlab
[[ -x $bin ]] || { echo "screenshots.sh: $bin is not built (scripts/build.sh)" >&2; exit 2; }
command -v xvfb-run > /dev/null || { echo "screenshots.sh: xvfb-run is missing (scripts/setup.sh)" >&2; exit 2; }
out=docs/images
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '{"title": {"en": "Failure lab: a rank killed at step 5"}, "job": {"world_size": 4, "backend": "gloo", "epochs": 12, "faults": ["kill:2@5"], "timeout_s": 6}}' \
  > "$work/kill.json"
printf '{"title": {"en": "Four ranks on gloo, then two on MPI"}, "job": {"world_size": 4, "backend": "gloo", "epochs": 1500}}' \
  > "$work/long.json"

# shot NAME GEOMETRY ARGS...: one frame at the end of a run, audited, then kept.
shot() {
  local name=$1 size=$2
  shift 2
  xvfb-run -a -n $((100 + RANDOM % 800)) -s "-screen 0 ${size}x24 -noreset" "$bin" gui --width "${size%x*}" --height "${size#*x}" \
    --frames 10 --wait-run "$@" --screenshot "$work/$name.png" --layout-audit "$work/$name.json" > "$work/$name.log" 2>&1 || true
  [[ -s $work/$name.png ]] || { cat "$work/$name.log" >&2; echo "screenshots.sh: $name: no frame" >&2; exit 1; }
  python3 - "$work/$name.json" "$name" << 'PY'
import json, sys
audit = json.load(open(sys.argv[1]))
if audit["flaws"]:
    sys.exit(f"screenshots.sh: {sys.argv[2]}: {len(audit['flaws'])} unreadable line(s): {audit['flaws'][:3]}")
PY
  cp "$work/$name.png" "$out/$name.png"
  echo "$out/$name.png"
}

shot step-through-reduce-scatter 1920x1080 --scenario step-through-four-ranks --gated --ring-step 2
shot four-ranks-gloo 1920x1080 --scenario four-ranks-gloo
shot live-change-4-to-2-mpi 1920x1080 --scenario "$work/long.json" --switch 600:2:mpi
shot failure-lab 1920x1080 --scenario "$work/kill.json"
shot scale-view 1920x1080 --scenario four-ranks-gloo --focus scale
shot step-through-id-dark-720p 1280x720 --scenario step-through-four-ranks --gated --ring-step 2 --lang id --theme dark
