#!/usr/bin/env bash
# Parity with PyTorch DDP (1.13, gloo): the seed's job and four variations (tests/parity/
# configs.txt: padding, no shuffle with drop_last, momentum with weight decay, gradient
# accumulation under no_sync) at world sizes 2, 3 and 4, ringlab on both backends and both
# algorithms. Identical shards, per-epoch MSE within 1e-5, step losses within 1e-4.
#
# Always against the committed goldens (tests/parity/golden/, made by make_goldens.sh with real
# PyTorch), so the claim is checked on machines without PyTorch too. Where python3-torch is
# installed, each configuration is also run live in PyTorch and compared with its golden and with
# ringlab. RINGLAB_PARITY_LIVE=0 skips the live runs (as if PyTorch were not installed).
set -uo pipefail
ringlab=$1
src=$2
py=/usr/bin/python3
[ -x $py ] || { echo "SKIP: $py is needed to compare the JSON files"; exit 77; }
parity=$src/tests/parity
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

live=1
if [ "${RINGLAB_PARITY_LIVE:-1}" = 0 ]; then
  live=0; echo "note: live PyTorch runs switched off (RINGLAB_PARITY_LIVE=0): goldens only"
elif ! $py -c "import torch" 2>/dev/null; then
  live=0; echo "note: PyTorch is not installed for $py: goldens only (apt-get install python3-torch adds live runs)"
fi
backends=(gloo)
"$ringlab" run --backend mpi --epochs 0 -q >/dev/null 2>&1 && backends+=(mpi) || echo "note: mpi backend not built, testing gloo only"

failures=0 golden_checks=0 live_checks=0
compare() {  # compare A B label
  if $py "$parity/compare.py" "$1" "$2" 1e-5 > "$work/cmp.txt"; then return 0; fi
  echo "FAIL $3:"; sed 's/^/     /' "$work/cmp.txt"; failures=$((failures + 1)); return 1
}
while read -r name flags; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  for n in 2 3 4; do
    golden=$parity/golden/$name-ws$n.json
    if [ ! -f "$golden" ]; then echo "FAIL $name, world size $n: no golden at $golden"; failures=$((failures + 1)); continue; fi
    for backend in "${backends[@]}"; do
      for algorithm in ring native; do
        label="$name, world size $n, $backend, $algorithm"
        # shellcheck disable=SC2086
        if ! "$ringlab" run -q --world-size $n --backend $backend --algorithm $algorithm $flags \
             --report "$work/ringlab-$backend-$algorithm.json" 2> "$work/err"; then
          echo "FAIL $label: ringlab run failed: $(head -3 "$work/err")"; failures=$((failures + 1)); continue
        fi
        golden_checks=$((golden_checks + 1))
        compare "$work/ringlab-$backend-$algorithm.json" "$golden" "$label against the golden" && echo "ok   $label = golden"
      done
    done
    [ $live = 1 ] || continue
    # shellcheck disable=SC2086
    if ! $py "$parity/ddp_reference.py" --world-size $n $flags --out "$work/torch.json" > "$work/torch.out" 2>&1; then
      # PyTorch's rendezvous takes a free port it found a moment before; another process on a busy
      # machine can take it meanwhile ("Connection reset by peer" in a rank's TCPStore). That is
      # the machine, not the training: once more, said.
      grep -q "TCPStore\|Connection reset by peer\|Address already in use" "$work/torch.out" || {
        echo "FAIL $name, world size $n: PyTorch run failed: $(tail -3 "$work/torch.out")"; failures=$((failures + 1)); continue; }
      echo "note: $name, world size $n: PyTorch's rendezvous failed ($(tail -1 "$work/torch.out")): once more"
      # shellcheck disable=SC2086
      if ! $py "$parity/ddp_reference.py" --world-size $n $flags --out "$work/torch.json" > "$work/torch.out" 2>&1; then
        echo "FAIL $name, world size $n: PyTorch run failed twice: $(tail -3 "$work/torch.out")"; failures=$((failures + 1)); continue
      fi
    fi
    live_checks=$((live_checks + 1))
    compare "$work/torch.json" "$golden" "$name, world size $n: live PyTorch against its golden" &&
      compare "$work/ringlab-gloo-ring.json" "$work/torch.json" "$name, world size $n: ringlab against live PyTorch" &&
      echo "ok   $name, world size $n: live PyTorch = golden = ringlab"
  done
done < "$parity/configs.txt"

echo "parity: $golden_checks ringlab runs against goldens, $live_checks live PyTorch runs, $failures failing"
[ "$golden_checks" -gt 0 ] && [ "$failures" -eq 0 ]
