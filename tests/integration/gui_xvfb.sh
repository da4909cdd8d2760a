#!/usr/bin/env bash
# The desktop app under Xvfb (Mesa's software OpenGL): it starts real worker processes,
# renders frames, and its screenshots are real pictures that change with the ring's phase.
# Called by ctest as: bash gui_xvfb.sh <ringlab> <source-dir>. Exit 77 = skipped.
set -u
RINGLAB=${1:?usage: gui_xvfb.sh <ringlab> <source-dir>}
SOURCE=${2:?usage: gui_xvfb.sh <ringlab> <source-dir>}
export RINGLAB_SOURCE_DIR="$SOURCE"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "$0")/lib/headless.bash"

# Without a display the app explains how to run headless and exits non-zero, or says it was
# built without the app (then there is nothing to test here).
env -u DISPLAY -u WAYLAND_DISPLAY "$RINGLAB" gui --frames 1 >"$WORK/nodisplay.out" 2>&1
rc=$?
if grep -q "built without the desktop app" "$WORK/nodisplay.out"; then
  echo "SKIP: this ringlab was built without the desktop app"
  exit 77
fi
[ "$rc" -ne 0 ] || fail "no display: expected a non-zero exit"
grep -q "xvfb-run" "$WORK/nodisplay.out" || fail "no display: the message should say how to run headless: $(cat "$WORK/nodisplay.out")"

# A bad scenario file is reported with the file, the field and the reason, before any window.
printf '{"job": {"world_size": 99}}' >"$WORK/bad.json"
env -u DISPLAY "$RINGLAB" gui --scenario "$WORK/bad.json" >"$WORK/bad.out" 2>&1 && fail "bad scenario accepted"
grep -q "bad.json" "$WORK/bad.out" && grep -q "job.world_size" "$WORK/bad.out" ||
  fail "bad scenario: message should name the file and field: $(cat "$WORK/bad.out")"

if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed (apt-get install xvfb); the app was not rendered"
  exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: python3 is needed to read the screenshots"
  exit 77
fi

# Reads a PNG with the standard library only and prints: width height distinct_colours.
cat >"$WORK/png.py" <<'PY'
import struct, sys, zlib

def read(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), "unexpected PNG format"
            channels = 4 if color == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1: line[i] = (line[i] + a) & 255
            elif kind == 2: line[i] = (line[i] + b) & 255
            elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    pixels = [row[x:x + 3] for row in rows for x in range(0, stride, channels)]
    return width, height, pixels

if sys.argv[1] == "info":
    w, h, px = read(sys.argv[2])
    print(w, h, len(set(px)))
else:  # diff A B: fraction of pixels that differ
    _, _, a = read(sys.argv[2])
    _, _, b = read(sys.argv[3])
    print(sum(1 for p, q in zip(a, b) if p != q) / max(len(a), 1))
PY

render() {  # render NAME ARGS...: one headless run of the app
  local name=$1
  shift
  if ! headless 1280x1024x24 "$WORK/$name.out" "$RINGLAB" gui "$@" --screenshot "$WORK/$name.png"; then
    cat "$WORK/$name.out" >&2
    fail "ringlab gui $* exited non-zero"
  fi
  [ -s "$WORK/$name.png" ] || fail "$name: no screenshot written"
}

# 1. The 4-rank scenario, live, to the end of its run, shown at two phases of the ring.
render scatter --scenario four-ranks-gloo --frames 30 --wait-run --ring-step 2 \
  --frame-stats "$WORK/stats.json" --state-json "$WORK/scatter.json"
render gather --scenario four-ranks-gloo --frames 30 --wait-run --ring-step 5 --state-json "$WORK/gather.json"
read -r w h colours < <(python3 "$WORK/png.py" info "$WORK/scatter.png")
[ "$w" = 1920 ] && [ "$h" = 1080 ] || fail "screenshot is ${w}x${h}, expected 1920x1080"
[ "$colours" -ge 200 ] || fail "screenshot looks blank: only $colours distinct colours"
changed=$(python3 "$WORK/png.py" diff "$WORK/scatter.png" "$WORK/gather.png")
python3 -c "import sys; sys.exit(0 if float('$changed') > 0.005 else 1)" ||
  fail "the screenshots at reduce-scatter and all-gather are (nearly) the same: $changed of the pixels differ"
python3 - "$WORK/stats.json" "$WORK/scatter.json" "$WORK/gather.json" <<'PY' || fail "frame stats or ring model wrong"
import json, sys
stats = json.load(open(sys.argv[1]))
for key in ("p50_ms", "p95_ms", "p99_ms", "max_ms"):
    assert stats[key] > 0, key
assert stats["frames"] >= 30 and stats["p50_ms"] <= stats["p95_ms"] <= stats["p99_ms"] <= stats["max_ms"]
scatter, gather = json.load(open(sys.argv[2]))["ring"], json.load(open(sys.argv[3]))["ring"]
assert scatter["world_size"] == 4 and scatter["total_steps"] == 6, scatter
assert scatter["banner"] == "Reduce-scatter, step 3 of 3", scatter["banner"]
assert gather["banner"] == "All-gather, step 3 of 3", gather["banner"]
assert scatter["on_screen"] == "After ring step 2 of 6 (reduce-scatter 2 of 3)", scatter["on_screen"]
assert gather["on_screen"] == "After ring step 5 of 6 (all-gather 2 of 3)", gather["on_screen"]
# After 2 reduce-scatter steps each rank holds: the chunk it got at step 2 (3 ranks summed), the
# one it got at step 1 (2 ranks), and two chunks with only its own gradient.
for rank in scatter["chunks"]:
    assert sorted(len(c["contributors"]) for c in rank) == [1, 1, 2, 3], [c["contributors"] for c in rank]
print("frame p50 %.1f ms, p95 %.1f ms" % (stats["p50_ms"], stats["p95_ms"]))
PY

# 2. Step-through with real waiting: the [1, 2, 3] demo on 4 processes, held at the gate after
#    the last ring step, must show every rank holding the serial sum [4, 8, 12].
render gated --scenario step-through-four-ranks --frames 10 --wait-run --ring-step 6 --state-json "$WORK/gated.json"
python3 - "$WORK/gated.json" <<'PY' || fail "step-through: the ring did not end with the serial sum"
import json, sys
f = json.load(open(sys.argv[1]))["ring"]
assert f["algorithm"] == "demo" and f["done"], f["banner"]
assert f["serial_sum"] == [4.0, 8.0, 12.0], f["serial_sum"]
assert f["final_checked"] and f["final_matches"], f
for rank in f["chunks"]:
    assert [c.get("values") for c in rank] == [[4.0], [8.0], [12.0], []], rank
PY

# 2b. The same demo held before its first ring step: each rank holds its own [1, 2, 3]; the screen
#     does not call the all-reduce done, nor judge a sum that has not been made yet.
render before --scenario step-through-four-ranks --frames 10 --wait-run --ring-step 0 --state-json "$WORK/before.json"
python3 - "$WORK/before.json" <<'PY' || fail "step-through before step 1: the screen is not at the start"
import json, sys
f = json.load(open(sys.argv[1]))["ring"]
assert f["algorithm"] == "demo" and not f["done"], f
assert f["position"] == 0 and f["expected_steps"] == 6, f
assert f["on_screen"] == "Before ring step 1: each rank holds its own input", f["on_screen"]
assert f["banner"] == "Reduce-scatter, step 1 of 3", f["banner"]
assert not f["final_checked"] and not f["final_matches"], f
for rank in f["chunks"]:
    assert [c.get("values") for c in rank] == [[1.0], [2.0], [3.0], []], rank
PY

# 3. Bahasa Indonesia, dark theme, a projector's 1280x720.
render small --scenario seed-one-rank --frames 20 --lang id --theme dark --width 1280 --height 720
read -r w h colours < <(python3 "$WORK/png.py" info "$WORK/small.png")
[ "$w" = 1280 ] && [ "$h" = 720 ] || fail "screenshot is ${w}x${h}, expected 1280x720"
[ "$colours" -ge 100 ] || fail "dark screenshot looks blank: only $colours distinct colours"

# 4. The Scale view in front (--focus scale): curves, step bar and the live run's points draw a
#    picture of their own, not the ring layout of step 1.
render scale --scenario four-ranks-gloo --frames 20 --wait-run --focus scale
read -r w h colours < <(python3 "$WORK/png.py" info "$WORK/scale.png")
[ "$w" = 1920 ] && [ "$h" = 1080 ] || fail "scale screenshot is ${w}x${h}, expected 1920x1080"
[ "$colours" -ge 200 ] || fail "scale screenshot looks blank: only $colours distinct colours"
changed=$(python3 "$WORK/png.py" diff "$WORK/scatter.png" "$WORK/scale.png")
python3 -c "import sys; sys.exit(0 if float('$changed') > 0.05 else 1)" ||
  fail "--focus scale looks like the ring layout: only $changed of the pixels differ"

# 5. Help > About (--about), over the same frame as step 3: a window of its own, in Indonesian.
render about --scenario seed-one-rank --frames 20 --lang id --theme dark --width 1280 --height 720 --about
changed=$(python3 "$WORK/png.py" diff "$WORK/small.png" "$WORK/about.png")
python3 -c "import sys; sys.exit(0 if float('$changed') > 0.08 else 1)" ||
  fail "--about: no About window over the views, only $changed of the pixels differ"
# 6. A long run (10,000 steps) at a projector's 1280x720, and again at 1.6x text in Indonesian:
#    the status's numbers lengthen (steps to five digits, the last second's pace appears) and the
#    World size slider under them, which a class drags to grow the world live, never moves.
printf '%s' '{"title": {"en": "A long run"}, "job": {"world_size": 4, "backend": "gloo", "algorithm": "ring", "epochs": 5000}}' >"$WORK/long.json"
render long --scenario "$WORK/long.json" --frames 30 --wait-run --width 1280 --height 720 --state-json "$WORK/long_state.json"
render long_big --scenario "$WORK/long.json" --frames 30 --wait-run --width 1280 --height 720 --ui-scale 1.6 --lang id \
  --state-json "$WORK/long_big_state.json" --layout-audit "$WORK/long_big_audit.json"
python3 - "$WORK/long_state.json" "$WORK/long_big_state.json" "$WORK/long_big_audit.json" <<'PY' || fail "the World size slider moved during a long run"
import json, sys
for path in sys.argv[1:3]:
    s = json.load(open(path))
    assert s["run_phase"] == "finished" and s["latest_step"] == 9999, (path, s["run_phase"], s["latest_step"])
    assert s["window"]["world_slider_moved_px"] == 0, (path, s["window"])
assert json.load(open(sys.argv[3]))["flaws"] == [], "text cut or overlapping at 1.6x"
PY
# 7. The same job caught mid-run: the status's epoch is the one the Sampler shows. Each rank's
#    events come in batches of their own, and the status once named the furthest rank's epoch,
#    one ahead of the Sampler's newest complete epoch, in most frames of a live run; its count
#    of steps done was the furthest rank's too, epochs ahead of the epoch beside it.
printf '%s' '{"title": {"en": "A long run"}, "job": {"world_size": 4, "backend": "gloo", "algorithm": "ring", "epochs": 100000}}' >"$WORK/endless.json"
render midrun --scenario "$WORK/endless.json" --frames 150 --width 1280 --height 720 --state-json "$WORK/midrun.json"
python3 - "$WORK/midrun.json" <<'PY' || fail "mid-run, the status and the Sampler name different epochs, or the status counts steps outside its epoch"
import json, re, sys
s = json.load(open(sys.argv[1]))
said = s["said"]
assert s["run_phase"] == "running" and s["latest_step"] > 100, (s["run_phase"], s["latest_step"])
status_epoch = re.search(r"epoch ([\d,]+)$", said["progress"])
assert status_epoch and said["sampler_epoch"] == "epoch " + status_epoch.group(1), (said["progress"], said["sampler_epoch"])
# The count beside it lies in that epoch: 256 samples over 4 ranks, 32 a batch, 2 steps an epoch.
done = re.search(r"([\d,]+) steps?\b", said["progress"])
epoch = int(status_epoch.group(1).replace(",", ""))
assert done and 2 * (epoch - 1) <= int(done.group(1).replace(",", "")) <= 2 * epoch, said["progress"]
print("   mid-run:", said["progress"], "|", said["sampler_epoch"])
PY

echo "PASS: gui under Xvfb"
