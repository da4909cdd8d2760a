#!/usr/bin/env bash
# Regenerates the parity goldens (golden/NAME-wsN.json) with real PyTorch DDP (Debian's
# python3-torch, gloo): every configuration of configs.txt at world sizes 2, 3 and 4.
#
#   tests/parity/make_goldens.sh            # about 2 minutes on 2 cores
#
# A golden is ddp_reference.py's output less its timing, plus the configuration and the PyTorch
# version that made it. The parity test compares ringlab against these always, and against a
# live PyTorch run as well where python3-torch is installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
$py -c "import torch" 2>/dev/null || { echo "make_goldens: PyTorch is not installed for $py (apt-get install python3-torch)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
while read -r name flags; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  for n in 2 3 4; do
    # shellcheck disable=SC2086
    $py "$here/ddp_reference.py" --world-size $n $flags --out "$work/run.json"
    $py "$here/golden.py" make "$work/run.json" "$name" "$flags" > "$here/golden/$name-ws$n.json"
    echo "make_goldens: golden/$name-ws$n.json"
  done
done < "$here/configs.txt"
