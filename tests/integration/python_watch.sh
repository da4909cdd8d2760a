#!/usr/bin/env bash
# The ringlab_torch package's own tests (tests/python: the wire format against the C++ codec, the
# client, the no-op without ringlab, DDP runs in both modes against a fake event server, the
# course example against `ringlab run`), with this build's binary. Where PyTorch is installed,
# nothing in them may be skipped but what this machine cannot have (an IPv6 loopback).
set -uo pipefail
ringlab=$(realpath "$1")
src=$2
py=/usr/bin/python3
[ -x $py ] || { echo "SKIP: $py is not installed"; exit 77; }
$py -c "import torch" 2>/dev/null || { echo "SKIP: PyTorch is not installed for $py (apt-get install python3-torch)"; exit 77; }
out=$(cd "$src" && RINGLAB_BINARY=$ringlab $py -m unittest discover -s tests/python -t tests/python -v 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || { echo "FAIL: the Python tests failed (exit $rc)"; exit 1; }
skipped=$(grep -E " skipped '" <<< "$out" | grep -v "IPv6" || true)
if [ -n "$skipped" ]; then echo "FAIL: skipped although PyTorch and ringlab are here:"; echo "$skipped"; exit 1; fi
echo PASS
