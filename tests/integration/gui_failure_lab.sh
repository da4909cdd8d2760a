#!/usr/bin/env bash
# The failure labs in the desktop app, headless under Xvfb: each fault is started from a scenario
# the way the lab's controls set it up, the run ends the way the lesson says, the app names the
# rank its ring and timeline highlight, and the screenshot carries the warning colour.
# Called by ctest as: bash gui_failure_lab.sh <ringlab> <source-dir>. Exit 77 = skipped.
set -u
RINGLAB=${1:?usage: gui_failure_lab.sh <ringlab> <source-dir>}
SOURCE=${2:?usage: gui_failure_lab.sh <ringlab> <source-dir>}
export RINGLAB_SOURCE_DIR="$SOURCE"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "$0")/lib/headless.bash"

require_headless_app "$RINGLAB"

# Counts the pixels of a PNG (8-bit RGB or RGBA, as the app writes them) within 12 of a colour.
cat >"$WORK/count.py" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, color = struct.unpack(">IIBB", body[:10])
        n = 4 if color == 6 else 3
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw, stride = zlib.decompress(idat), width * n
prev, count = bytearray(stride), 0
target = tuple(int(sys.argv[2][i:i + 2], 16) for i in (0, 2, 4))
for y in range(height):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - n] if i >= n else 0
        b, c = prev[i], (prev[i - n] if i >= n else 0)
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, n):
        if all(abs(line[x + k] - target[k]) <= 12 for k in range(3)): count += 1
    prev = line
print(width, height, count)
PY

# lab NAME JOB_JSON ARGS...: a scenario with that job, rendered headless to the end of its run.
lab() {
  local name=$1 job=$2
  shift 2
  printf '{"title": "failure lab: %s", "job": %s}' "$name" "$job" >"$WORK/$name.json"
  local t0=$(date +%s%N)
  headless 1920x1080x24 "$WORK/$name.out" "$RINGLAB" gui --scenario "$WORK/$name.json" --frames 10 --wait-run \
    --screenshot "$WORK/$name.png" --state-json "$WORK/$name.state.json" "$@"
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  [ -s "$WORK/$name.png" ] || { cat "$WORK/$name.out" >&2; fail "$name: no screenshot written (exit $rc)"; }
}
expect() {  # expect NAME TEXT: the app's output says it
  grep -qF -- "$2" "$WORK/$1.out" || { cat "$WORK/$1.out" >&2; fail "$1: expected '$2' in the app's output"; }
}
red_pixels() { python3 "$WORK/count.py" "$WORK/$1.png" C8342B | awk '{print $3}'; }

# 1. A killed rank: the run fails, names it, and the ring and timeline mark it (the light
#    theme's warning colour C8342B fills the card's note and the timeline's edge).
lab kill '{"world_size": 4, "backend": "gloo", "epochs": 12, "faults": ["kill:0@5"], "timeout_s": 6}'
[ $rc -eq 1 ] || { cat "$WORK/kill.out" >&2; fail "kill: expected exit 1 (the run failed), got $rc"; }
expect kill "ringlab gui: highlight: rank 0 killed"
# The others wait in the all-reduce rank 0 never joins, if they got there: the controller tears
# the group down the moment rank 0 dies, and a rank still in its forward or backward pass then (a
# busy machine, a sanitizer) is "stopped with the others". So: rank 0 is the only culprit, and
# any rank shown waiting is one of the others.
grep "ringlab gui: highlight: rank [0-9]* " "$WORK/kill.out" | grep -qv "highlight: rank 0 killed" &&
  { cat "$WORK/kill.out" >&2; fail "kill: a rank other than 0 was blamed"; }
grep -E "ringlab gui: highlight: ranks? .* waiting" "$WORK/kill.out" | grep -qE "ranks? ([0-9,]*,)?0(,|$| )" &&
  { cat "$WORK/kill.out" >&2; fail "kill: rank 0, the killed one, was shown waiting"; }
expect kill "rank 0 failed: killed by SIGKILL"
red=$(red_pixels kill)
[ "$red" -ge 2000 ] || fail "kill: the screenshot has only $red pixels in the warning colour"
echo "ok   kill:0@5: failed in ${ms} ms, rank 0 highlighted ($red warning pixels), no other rank blamed"

# 2. A skipped all-reduce: the fingerprint check stops the run at once (the app starts these
#    workers without its per-step stop check, which would otherwise hang with them).
lab skip '{"world_size": 4, "backend": "gloo", "epochs": 12, "faults": ["skip:0@5"], "timeout_s": 300}'
[ $rc -eq 1 ] || fail "skip: expected exit 1, got $rc"
expect skip "ringlab gui: highlight: rank 0 mismatch"
expect skip "mismatched collectives: this rank is at #"
[ $ms -lt 60000 ] || fail "skip: took ${ms} ms: it waited for the 300 s timeout instead of failing on the fingerprints"
echo "ok   skip:0@5: fingerprint mismatch in ${ms} ms, rank 0 highlighted"

# 2b. An extra all-reduce: rank 1's collective 7 is the extra one, the others' is step 5's. The
#     ring shows collective 7, the one the others wait in, not the last finished one (it showed #6
#     when rank 1's extra all-reduce, labelled apart, came first).
lab extra '{"world_size": 4, "backend": "gloo", "epochs": 12, "faults": ["extra:1@5"], "timeout_s": 300}'
[ $rc -eq 1 ] || fail "extra: expected exit 1, got $rc"
expect extra "ringlab gui: highlight: rank 1 mismatch"
shown=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['step_through']['collective_id'])" "$WORK/extra.state.json")
[ "$shown" = 7 ] || fail "extra: the ring shows collective $shown, not 7 (the one the others wait in)"
echo "ok   extra:1@5: rank 1 highlighted, the ring on collective 7"

# 3. Uneven inputs without Join hang until the timeout; the rank with less data is blamed.
lab uneven '{"world_size": 4, "backend": "gloo", "epochs": 1, "uneven": ["0:1"], "timeout_s": 3}'
[ $rc -eq 1 ] || fail "uneven: expected exit 1, got $rc"
expect uneven "ringlab gui: highlight: rank 0 out-of-data"
# ... and the others wait for it in their next all-reduce, as in PyTorch (not in a step vote of
# the app's: such runs go without one).
expect uneven "ringlab gui: highlight: ranks 1,2,3 waiting"
# The first error is the 3 s timeout itself (gloo words it "Timed out waiting 3000ms" on its I/O
# thread's path and "Read timeout" on the synchronous pairs small exchanges use), or, when a rank
# that timed out closes its gloo pair a moment before rank 0's own wait expires, rank 0 seeing
# that close: all are the timeout.
grep -qE "Timed out waiting 3000ms|Read timeout|Connection closed by peer" "$WORK/uneven.out" ||
  { cat "$WORK/uneven.out" >&2; fail "uneven: expected the 3 s timeout (or the close it causes) in the app's output"; }
echo "ok   uneven 0:1: hung until the 3 s timeout (${ms} ms in all), rank 0 highlighted"

# 4. The same with Join completes, and nothing is highlighted.
lab join '{"world_size": 4, "backend": "gloo", "epochs": 2, "uneven": ["0:1"], "join": true, "timeout_s": 6}'
[ $rc -eq 0 ] || { cat "$WORK/join.out" >&2; fail "join: expected the run to complete, got exit $rc"; }
grep -q "highlight" "$WORK/join.out" && fail "join: a completed run highlighted a rank: $(cat "$WORK/join.out")"
python3 - "$WORK/join.state.json" <<'PY' || fail "join: the run did not train to the end"
import json, sys
s = json.load(open(sys.argv[1]))
assert len(s["epoch_mse"]) == 2 and not s["errors"], (s["epoch_mse"], s["errors"])
PY
echo "ok   uneven 0:1 with Join: completed both epochs, nothing highlighted"

# 5. A straggler slows every step but fails nothing.
lab delay '{"world_size": 2, "backend": "gloo", "epochs": 1, "faults": ["delay:0:20"]}' --focus timeline
[ $rc -eq 0 ] || { cat "$WORK/delay.out" >&2; fail "delay: expected the run to complete, got exit $rc"; }
grep -q "highlight" "$WORK/delay.out" && fail "delay: a straggler is not a failure: $(cat "$WORK/delay.out")"
# Its only trace is in the step time: the lab says it beside the lesson, and the menu bar names the fault.
python3 - "$WORK/delay.state.json" << 'PY' || fail "delay: the lab's outcome or the menu bar's fault"
import json, re, sys
s = json.load(open(sys.argv[1]))
said = s["said"]
m = re.fullmatch(r"This run: ([\d,]+) µs per step, 20,000 µs of which is rank 0's delay: every rank's step waits for it", said["lab_outcome"])
assert m and int(m.group(1).replace(",", "")) >= 20000, said["lab_outcome"]
assert said["menu_bar"].endswith(" · fault: Straggler (delay every step), rank 0"), said["menu_bar"]
PY
echo "ok   delay:0:20: completed in ${ms} ms, nothing highlighted"

# 6. The lab in Bahasa Indonesia: the same failure, named the same way.
lab kill_id '{"world_size": 3, "backend": "gloo", "epochs": 12, "faults": ["kill:0@3"], "timeout_s": 6}' --lang id
[ $rc -eq 1 ] || fail "kill (id): expected exit 1, got $rc"
expect kill_id "ringlab gui: highlight: rank 0 killed"
echo "ok   kill:0@3 in Bahasa Indonesia: rank 0 highlighted"
# 7. Kill rank now, pressed at step 300 of a long run (the button's request, --kill-now): a real
#    SIGKILL whose last events die with the process. The Failure lab places the killed rank
#    where the others' waits put it, not steps behind them, and its "same run from a shell"
#    repeats the kill at that step.
lab killnow '{"world_size": 3, "backend": "gloo", "epochs": 100000, "timeout_s": 20}' --kill-now 300:1
[ $rc -eq 1 ] || { cat "$WORK/killnow.out" >&2; fail "kill now: expected exit 1 (the run failed), got $rc"; }
expect killnow "ringlab gui: highlight: rank 1 killed"
python3 - "$WORK/killnow.state.json" <<'PY' || fail "kill now: the killed rank was not placed where the others put it"
import json, sys
s = json.load(open(sys.argv[1]))
f = s["failure"]
assert f["culprits"] == [1], f
ranks = {r["rank"]: r for r in f["ranks"]}
others = min(ranks[r]["step"] for r in (0, 2))
assert others >= 300, (others, f)
killed = ranks[1]
assert killed["cause"] == "killed", killed
# It died in the step the others wait in, or in the one before (none of them finished a collective it missed).
assert others - 1 <= killed["step"] <= others, (killed, others)
assert f"--fault kill:1@{killed['step']}" in s["said"]["lab_command"], (s["said"]["lab_command"], killed)
print(f"ok   kill rank 1 now at step 300: placed at step {killed['step']} (the others at {others}), "
      f"{'from their positions' if killed['position_from_peers'] else 'from its own events'}; "
      f"the shell line repeats it: {s['said']['lab_command']}")
PY

echo "PASS: failure labs in the app"
