#!/usr/bin/env bash
# From a fresh machine to a full test run: install, build, run every gating test with ctest.
# The tiers (tests/CMakeLists.txt): unit, component, e2e. The perf tier judges time and memory
# growth, which depend on what else the machine is doing: scripts/bench.sh runs it.
# Extra arguments go to ctest (e.g. -L unit, -R parity).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
# Two at a time; the summary at the end counts the tests of each tier (ctest's label summary).
ctest --test-dir build --output-on-failure -j 2 --timeout 900 -LE perf "$@"
