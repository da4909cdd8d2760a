#!/usr/bin/env bash
# Keys as quick as xdotool (or a quick hand on a slow software-rendered frame) types them: a
# modifier pressed and let go within a few milliseconds, between two frames. Dear ImGui 1.86
# reads keys as a frame begins, so the app holds a tap's release until a frame has seen its press
# (app/key_taps.h) and lets it go between frames: let go inside a frame, Ctrl and Shift no longer
# matched what the frame had read, and Dear ImGui's assertion aborted the app (Ctrl+click on a
# slider, then Ctrl+A or a Shift-typed character in its field). Fifteen rounds of Ctrl+click the
# World size slider, Ctrl+A, "x_Y" typed and rubbed out, "3", Enter: the app is alive after
# them. Then "0" typed the same way is held to the slider's 1 (a 0 reached Start, which divided
# by it: SIGFPE), F5 trains one rank, and Ctrl+Q still quits. Last, Ctrl+click opens the field
# with the slider's value in it: End and "2" typed after the 4 make 42, held to 16 (the field
# opened empty, and "2" was all it held).
# Called by ctest as: bash gui_keys.sh <ringlab> <source-dir>. Exit 77 = skipped.
set -uo pipefail
RINGLAB=$(realpath "$1")
SRC=$2
source "$(dirname "$0")/lib/headless.bash"
require_headless_app "$RINGLAB"
command -v xdotool > /dev/null || { echo "SKIP: xdotool is not installed (scripts/setup.sh installs it)"; exit 77; }
export APP_WINDOW_LIB="$(realpath "$(dirname "$0")")/lib/app_window.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Inside the virtual display: the app idle at 1280x720; ROUNDS rounds of taps on the slider at
# X:Y (0: none, only its state written; "append": End and "2" typed into its field); then Ctrl+Q,
# waited for (bounded).
cat > "$WORK/drive.sh" << 'DRIVE'
#!/usr/bin/env bash
set -u
ringlab=$1 out=$2 name=$3 at=$4 rounds=$5
source "$APP_WINDOW_LIB"
await_display
open_app_window "$out/$name.log" "$ringlab" gui --width 1280 --height 720 --state-json "$out/$name.json"
sleep 2
if [ "$rounds" = append ]; then
  # A person's pause between the click and End: pressed within the frame that opens the field,
  # End comes before the field selects all it holds (on a busy machine the two share a frame).
  xdotool mousemove "${at%:*}" "${at#*:}" keydown ctrl click 1 keyup ctrl
  sleep 0.5
  xdotool key End
  sleep 0.2
  xdotool type 2
  xdotool key Return
  rounds=0
fi
for i in $(seq "$rounds"); do
  xdotool mousemove "${at%:*}" "${at#*:}" keydown ctrl click 1 keyup ctrl
  xdotool key ctrl+a
  xdotool type "x_Y"
  xdotool key BackSpace BackSpace BackSpace
  xdotool type 3
  xdotool key Return
  kill -0 $app 2> /dev/null || { echo "the app died in round $i: $(tail -2 "$out/$name.log")"; exit 1; }
done
if [ "$rounds" -gt 0 ]; then
  sleep 1
  xdotool mousemove "${at%:*}" "${at#*:}" keydown ctrl click 1 keyup ctrl
  xdotool key ctrl+a
  xdotool type 0
  xdotool key Return
  sleep 0.5
  xdotool key F5
  sleep 3
  kill -0 $app 2> /dev/null || { echo "the app died after World size 0 and F5: $(tail -2 "$out/$name.log")"; exit 1; }
fi
sleep 1
quit_app_window "$out/$name.log"
exit 0
DRIVE

drive() {  # drive NAME X:Y ROUNDS, again on a new display when one does not answer
  headless_again 1280x720x24 "$WORK/$1.out" bash "$WORK/drive.sh" "$RINGLAB" "$WORK" "$@"
}

# Where the slider is in this window: the app says, in its state when it quits.
drive place 0:0 0 || { echo "FAIL the idle window: $(tail -3 "$WORK/place.out")"; exit 1; }
at=$(python3 -c 'import json, sys; w = json.load(open(sys.argv[1]))["world_slider"]; print("%d:%d" % (round(w["x0"] + 20), round(w["y"])))' "$WORK/place.json") ||
  { echo "FAIL the World size slider's place: not in the window's state"; exit 1; }
if ! drive taps "$at" 15; then
  echo "FAIL quick modifier taps: $(tail -3 "$WORK/taps.out")"
  exit 1
fi
if python3 - "$WORK/taps.json" 2> "$WORK/cmp" << 'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["job_world_size"] == 1, ("World size 0 typed", s["job_world_size"])
assert [g["world_size"] for g in s["generations"]] == [1], s["generations"]
PY
then
  echo "ok   15 rounds of quick Ctrl+click, Ctrl+A, Shift-typed keys and Enter on the World size slider: alive; 0 typed is 1, F5 trains it, Ctrl+Q quits"
else
  echo "FAIL the typed World size did not take: $(tail -1 "$WORK/cmp")"
  exit 1
fi
if ! drive append "$at" append; then
  echo "FAIL Ctrl+click, End, 2, Enter: $(tail -3 "$WORK/append.out")"
  exit 1
fi
if python3 - "$WORK/append.json" 2> "$WORK/cmp" << 'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["job_world_size"] == 16, ("4, End, 2 typed: 42 held to 16; 2 when the field opened empty", s["job_world_size"])
PY
then
  echo "ok   Ctrl+click opens the World size field holding 4: End, 2, Enter make 42, held to 16"
else
  echo "FAIL Ctrl+click's field: $(tail -1 "$WORK/cmp")"
  exit 1
fi
