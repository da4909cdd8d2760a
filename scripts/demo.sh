#!/usr/bin/env bash
# From a fresh machine to the app: install, build, open ringlab. Without a display it runs the
# seed's job headless instead, then renders the app under Xvfb and saves a screenshot.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec ./build/app/ringlab gui "$@"
fi
echo "No display: the seed's job, headless, with 4 real worker processes on gloo"
./build/app/ringlab run --world-size 4 --backend gloo
echo
echo "The seed's job at world size 1 (the course's printed run):"
./build/app/ringlab run
if [ -x ./build/app/ringlab ] && ./build/app/ringlab gui --help >/dev/null 2>&1; then
  mkdir -p out
  xvfb-run -a -s "-screen 0 1920x1080x24 -noreset" ./build/app/ringlab gui --frames 600 --scenario four-ranks-gloo \
    --screenshot out/ringlab.png "$@" && echo "The app, rendered headless: out/ringlab.png"
fi
