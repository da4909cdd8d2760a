#!/usr/bin/env bash
# Frames presented in part show what a whole frame shows. On Mesa's software renderer the window
# redraws and presents only the squares of the screen that changed (app/partial_present.h); a
# square wrongly left out keeps what an earlier frame drew there. With
# RINGLAB_CHECK_PARTIAL_FRAMES=1 the app draws each such frame a second time, whole, offscreen,
# and counts the frames whose pixels differ (app/partial_check.h). Two walks a class takes, in
# the real window under Xvfb, driven with xdotool:
#   - step-through: F5, a dozen Nexts (the Timeline follows, its labels move), Previous, Play,
#     the mouse over the ring and the Timeline;
#   - a long run on 4 ranks: side panes shown from their last drawing between refreshes, the
#     mouse over the panes, Stop.
# Every frame presented in part must match the whole frame. Before the fix, the Timeline's right
# edge and its bottom rows differed by a column and a row of pixels (a scissor rounded one way in
# a whole frame and the other in a square).
# Called by ctest as: bash gui_partial_frames.sh <ringlab> <source-dir>. Exit 77 = skipped.
set -uo pipefail
RINGLAB=$(realpath "$1")
SRC=$2
source "$(dirname "$0")/lib/headless.bash"
require_headless_app "$RINGLAB"
for tool in xdotool; do
  command -v $tool > /dev/null || { echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"; exit 77; }
done
export APP_WINDOW_LIB="$(realpath "$(dirname "$0")")/lib/app_window.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/long.json" << 'EOF2'
{"title": {"en": "long run", "id": "long run"}, "description": {"en": "test", "id": "test"},
 "job": {"world_size": 4, "backend": "gloo", "algorithm": "ring", "epochs": 1500, "samples": 4096, "batch_size": 32},
 "view": {"focus": "ring"}}
EOF2

cat > "$WORK/drive.sh" << 'DRIVE'
#!/usr/bin/env bash
set -u
ringlab=$1 out=$2 walk=$3 scenario=$4
source "$APP_WINDOW_LIB"
await_display
export RINGLAB_CHECK_PARTIAL_FRAMES=1
open_app_window "$out/$walk.log" "$ringlab" gui --width 1280 --height 720 --scenario "$scenario" --state-json "$out/$walk.json"
sleep 1.5
xdotool key --window "$wid" F5
for _ in $(seq 100); do pgrep -f "ringlab worker" > /dev/null && break; sleep 0.1; done
sleep 3
if [ "$walk" = steps ]; then
  for _ in $(seq 12); do xdotool key --window "$wid" Right; sleep 0.5; done
  for _ in $(seq 3); do xdotool key --window "$wid" Left; sleep 0.5; done
  xdotool mousemove 570 280; sleep 1
  xdotool mousemove 800 600; sleep 1
  xdotool key --window "$wid" space; sleep 4
  xdotool mousemove 1279 719; sleep 1
else
  xdotool mousemove 1000 150; sleep 2
  xdotool mousemove 700 600; sleep 2
  xdotool mousemove 1279 719; sleep 3
  xdotool key --window "$wid" shift+F5; sleep 2
fi
quit_app_window "$out/$walk.log"
exit 0
DRIVE

fail=0
for walk in steps long; do
  scenario=step-through-four-ranks
  [ $walk = long ] && scenario=$WORK/long.json
  if ! headless_again 1280x720x24 "$WORK/drive-$walk.out" bash "$WORK/drive.sh" "$RINGLAB" "$WORK" $walk "$scenario"; then
    echo "FAIL $walk: the drive failed: $(tail -3 "$WORK/drive-$walk.out")"
    fail=1
    continue
  fi
  if python3 - "$WORK/$walk.json" "$walk" > "$WORK/cmp" 2>&1 << 'PY'
import json, sys
w = json.load(open(sys.argv[1]))["window"]
checked, differing = w["partial_frames_checked"], w["partial_frames_differing"]
assert checked >= 20, f"only {checked} frames presented in part were checked: nothing to compare"
if sys.argv[2] == "long":
    assert w["side_panes_reused"] > 0, f"no side pane was shown from its last drawing: {w}"
assert differing == 0, f"{differing} of {checked} frames presented in part differ from the whole frame"
print(f"{checked} frames presented in part, each the same as the whole frame; {w['side_panes_reused']} side panes reused")
PY
  then echo "ok   $walk: $(cat "$WORK/cmp")"
  else
    echo "FAIL $walk: $(tail -1 "$WORK/cmp")"
    grep "presented in part differs" "$WORK/$walk.log" | head -5 | sed 's/^/     /'
    fail=1
  fi
done
exit $fail
