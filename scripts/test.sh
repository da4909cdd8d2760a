#!/usr/bin/env bash
# From a fresh machine to a full test run: install, build, run every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
# The doctest binaries and the multi-process, PyTorch-parity and Xvfb scripts, two at a time.
ctest --test-dir build --output-on-failure -j 2 --timeout 900
