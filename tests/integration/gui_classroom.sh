#!/usr/bin/env bash
# The classroom flows driven as a teacher drives them: the real window under Xvfb at a projector's
# 1280x720, keys pressed with xdotool, what the app showed read from --state-json when Ctrl+Q
# closes it, and a screenshot of each end state (kept in $RINGLAB_TEST_ARTIFACTS when set).
#  1. Step-through: F5 starts the 4-rank demo held at the gate; Right x3, then Left: the ring shows
#     step 2 of 6 in words and chunks, and the workers took exactly 3 steps.
#  2. The same with a presenter's clicker (PageDown / PageUp).
#  3. Stop: F5 starts a 4-rank run, Shift+F5 stops it: "stopped", and no failure is shown.
#  4. Inputs: -5 typed into Samples is refused with its range under the field; the job keeps 256,
#     and F5 starts nothing until the field is fixed.
#  5. Memory: 10,000,000 samples typed, then F5: the app asks first, with the estimate, and starts
#     nothing until the answer.
#  6. Menus: Help opens with a click and closes with Escape.
#  7. Idle: a window with nothing to do draws a few frames a second, not 60, and presents almost none.
#  8. After a run: its last all-reduce is shown done, and the view holds instead of looping.
#  9. Start again after a run ended: the new run's all-reduces are followed (the hold does not stay).
# 10. Gated, past the end of an all-reduce: Right shows the next one before its first step (as
#     Left comes back over it), and only the next Right lets the workers take that step.
# 11. Reset (Ctrl+R) after Right turned following into Replay: the step-through is the scenario's
#     again (following live, the workers not held), as a newly opened scenario's is.
# 12. Stop pressed while a short run's workers start: the status says "stopped" only if the run
#     was cut short; a run whose every epoch was trained says "finished".
# 13. Start again after a gated run was switched to following and ended: the new run (over in
#     less than a second) is followed, its all-reduces playing, not left before step 1 with Play off.
# 14. A live run's side panes (shown from their last drawing between refreshes while the workers
#     compute): the app says it reused them, and on the screen mid-run their first rows (titles,
#     check boxes, legends) are the very pixels of the same rows drawn afresh after Stop (flow 3):
#     in place, the right way up, not a pixel off. The status shows the last second's step time.
# 15. F5 and Right in one xdotool call (often one frame): that first Next counts, and the workers
#     take exactly one ring step.
# 16. A run held at the gate, then followed live, then switched back to step-through mid-run: the
#     screen is on the all-reduce the workers are held in, not the dozens of fast all-reduces
#     behind it that they ran before the gate reached them, and three Rights step there.
# 17. Stop while the workers are held at the gate, two steps into an all-reduce: the ring says the
#     run ended before the third step, and Next is greyed out instead of promising it.
# 18. Held at the gate, then followed live: the status says training again, with the last
#     second's step time, not "held at the gate" or "no step time".
# 19. The same run stopped after it followed live again: the status gives the run's step time,
#     saying how many all-reduces were held at the gate and how much they can have added.
# 20. "Forget set_epoch" ticked during a long run: the app asks before it starts the run again;
#     Escape keeps the run going and the setting as it was.
# 21. Two ranks on MPI, whose steps outrun the app's intake (it takes fewer steps' details, past
#     that drops events, and says so): the
#     window goes on drawing, and no frame's draw data grows with the run (a collective whose
#     end was dropped once filled memory with the stripes of a bar millions of pixels long).
# 22. Play at the gate: the status says Play lets one ring step through at a time, not "held".
# 23. A long run in the big Timeline: Follow unticked, the view dragged back and zoomed all the
#     way out. The stretch whose spans were let go (the timeline keeps each rank's newest) is
#     veiled and says so, instead of showing ranks that did nothing; the axis starts at 0.
# 24. The same run's timeline with Follow unticked and left alone for 7 s, while the run's new
#     spans push the old ones out: the moment the class froze stays on screen.
# 25. Ctrl+R (Reset) during a long run: the app asks first, the run goes on meanwhile; Escape
#     keeps it. Stepping through, the question says the workers stay held at the gate; Ctrl+Q
#     while it is open puts Quit's question in its place (the two once hid each other).
# 26. The World size slider dragged before a run: the app says the world was set here, and
#     the fields under it stay where they were (the note once pushed them down a row or two,
#     and a click meant for Epochs typed into the field that slid under the pointer).
# 27. A long run, then Stop: on this CPU renderer the window presented most of the run's frames
#     in part (the rectangles that changed, over the last frame). Once the workers are gone and
#     the screen stood still for 3 s (the ring goes on to the newest all-reduce after Stop), the
#     whole screen is painted red over the window and uncovered again (xrefresh): the window
#     draws itself whole, and that is the very picture the frames in part had left there.
# 28. Replay during a fast live run (2 ranks on MPI): it starts from a kept all-reduce, whose
#     spans the Timeline still has after four Previous and a Stop; Replay chosen before Start
#     gives way to Follow live for the new run.
# 29. The dark theme picked from the View menu during a live run, the mouse then still: the
#     whole window turns dark, with no square of the old light background left.
# 30. World size stepped with its - and + buttons: twice - before Start takes 4 to 2; four
#     clicks on + while training take 4 to 8 with one restart of the workers, not four.
# 31. Nine Right presses in one burst: each counts, also those made past the demo all-reduce's
#     end before the workers reported the next one.
set -uo pipefail
RINGLAB=$(realpath "$1")
SRC=$2
source "$(dirname "$0")/lib/headless.bash"
require_headless_app "$RINGLAB"
for tool in xdotool xwd xrefresh; do
  command -v $tool > /dev/null || { echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"; exit 77; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ART=${RINGLAB_TEST_ARTIFACTS:-$WORK}
mkdir -p "$ART"
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

# The driver runs inside the virtual display: it starts the app, presses KEYS (a list of xdotool
# key names; "wait-workers" waits until the run's 4 workers exist, "pause" lets the screen catch
# up), dumps the screen, quits with Ctrl+Q and waits (bounded) for the app to end.
cat > "$WORK/drive.sh" << 'DRIVE'
#!/usr/bin/env bash
set -u
ringlab=$1 out=$2 name=$3 scenario=$4
shift 4
# A fresh Xvfb under a loaded machine is now and then unusable (it does not answer, or, before
# headless() passed -noreset, refused a client that connected while it reset after the last one
# left): that is the virtual display, not the app. Exit 75 then, and the test starts the drive
# again on a new display (at most twice more), saying so.
for _ in $(seq 100); do xdotool getdisplaygeometry > /dev/null 2>&1 && break; sleep 0.1; done
xdotool getdisplaygeometry > /dev/null 2>&1 || { echo "the virtual display $DISPLAY does not answer"; exit 75; }
# APP_ARGS: more of the app's options, word by word (--torch SCRIPT).
# APP_SIZE=default: the app's own window size, not the screen's 1280x720.
size=(--width 1280 --height 720)
[ "${APP_SIZE:-}" = default ] && size=()
"$ringlab" gui --scenario "$scenario" "${size[@]}" --state-json "$out/$name.json" ${APP_ARGS:-} > "$out/$name.log" 2>&1 &
app=$!
wid=""
for _ in $(seq 600); do
  wid=$(xdotool search --onlyvisible --name "^ringlab: " 2> /dev/null | head -1)
  [ -n "$wid" ] && break
  kill -0 $app 2> /dev/null || break
  sleep 0.1
done
if [ -z "$wid" ]; then
  kill $app 2> /dev/null
  grep -q "Failed to open display" "$out/$name.log" && { echo "the app could not open $DISPLAY"; exit 75; }
  echo "no window appeared"; cat "$out/$name.log"; exit 1
fi
# Every wait here has its end: `windowfocus --sync` waits for a window that may have died with
# the app, and a drive that goes on without the app only types into nothing.
if ! timeout 10 xdotool windowfocus --sync "$wid" || ! kill -0 $app 2> /dev/null; then
  kill -0 $app 2> /dev/null && { kill -9 $app; echo "the window did not take the focus in 10 s"; exit 1; }
  wait $app; echo "the app ended (exit code $?) before its window took the focus:"; tail -20 "$out/$name.log"; exit 1
fi
sleep 1  # the first frames
# Whether two screen dumps hold the same pixels (their headers may differ in unused bytes).
same_pixels() {
  python3 -c '
import struct, sys
def pixels(name):
    data = open(name, "rb").read()
    header = struct.unpack(">25I", data[:100])
    return data[header[0] + 12 * header[19]:]  # after the header and the colour map
sys.exit(pixels(sys.argv[1]) != pixels(sys.argv[2]))' "$1" "$2"
}
for key in "$@"; do
  if ! kill -0 $app 2> /dev/null; then
    wait $app; echo "the app ended (exit code $?) during the drive, before '$key':"; tail -20 "$out/$name.log"; exit 1
  fi
  case $key in
    wait-workers)
      for _ in $(seq 600); do [ "$(pgrep -P $app -fc 'ringlab worker')" -ge 4 ] && break; sleep 0.1; done
      sleep 2 ;;  # they join the group and reach the gate
    pause) sleep 1.5 ;;
    wait-ended)  # the run's workers came and went (up to 30 s to come, 120 s to go)
      for _ in $(seq 300); do [ "$(pgrep -P $app -fc 'ringlab worker')" -ge 1 ] && break; sleep 0.1; done
      for _ in $(seq 1200); do [ "$(pgrep -P $app -fc 'ringlab worker')" -eq 0 ] && break; sleep 0.1; done
      [ "$(pgrep -P $app -fc 'ringlab worker')" -eq 0 ] || { echo "the run's workers were still there after 120 s"; exit 1; }
      sleep 1 ;;
    settled:*)  # settled:FILE: the screen once the run's workers are gone and it stood still for 3 s
      # While workers still run (a Stop under way) the app may draw a frame a second or less on a
      # loaded machine; after them, following live holds a finished all-reduce 1.2 s before it
      # jumps to the newest and animates that: a second without a new frame is not a still screen.
      for _ in $(seq 600); do [ "$(pgrep -P $app -fc 'ringlab worker')" -eq 0 ] && break; sleep 0.1; done
      [ "$(pgrep -P $app -fc 'ringlab worker')" -eq 0 ] || { echo "the workers were still there 60 s after the keys"; exit 1; }
      file=$out/${key#settled:} still=0
      xwd -root -silent > "$file"
      for _ in $(seq 60); do
        sleep 1
        xwd -root -silent > "$out/now.xwd"
        if same_pixels "$file" "$out/now.xwd"; then
          still=$((still + 1))
          [ $still -ge 3 ] && break
        else
          still=0
          mv "$out/now.xwd" "$file"
        fi
      done
      [ $still -ge 3 ] || { echo "the screen never stood still for 3 s in 60 s"; exit 1; } ;;
    refresh) xrefresh -solid red; sleep 0.5 ;;  # every window uncovered: each draws itself again
    quickstop) xdotool key F5; sleep 0.15; xdotool key shift+F5; sleep 0.3 ;;  # Stop while the workers start
    click:*) IFS=: read -r _ x y <<< "$key"; xdotool mousemove "$x" "$y" click --repeat 2 1; sleep 0.3 ;;
    tap:*) IFS=: read -r _ x y <<< "$key"; xdotool mousemove "$x" "$y" click 1; sleep 0.3 ;;
    ctrltap:*) IFS=: read -r _ x y <<< "$key"; xdotool mousemove "$x" "$y" keydown ctrl click 1 keyup ctrl; sleep 0.3 ;;
    type:*) xdotool type -- "${key#type:}"; sleep 0.3 ;;
    drag:*)  # drag:X0:Y:X1, the left button held, in steps a hand would take
      IFS=: read -r _ x y x1 <<< "$key"; xdotool mousemove "$x" "$y" mousedown 1; sleep 0.1
      while [ "$x" -lt "$x1" ]; do x=$((x + 50)); xdotool mousemove "$x" "$y"; sleep 0.05; done
      xdotool mouseup 1; sleep 0.3 ;;
    wheel-out:*) IFS=: read -r _ x y n <<< "$key"; xdotool mousemove "$x" "$y"; for _ in $(seq "$n"); do xdotool click 5; sleep 0.03; done; sleep 0.3 ;;
    together:*) k=${key#together:}; xdotool key ${k//,/ }; sleep 0.3 ;;  # together:F5,Right: one call, keys ms apart
    *) xdotool key "$key"; sleep 0.3 ;;
  esac
done
sleep 1.5
xwd -root -silent > "$out/$name.xwd"
echo "window title: $(xdotool getwindowname "$wid" 2> /dev/null)"
xdotool getwindowgeometry "$wid" 2> /dev/null | sed -n 's/^ *Geometry: /window size: /p'
# Ctrl+Q during a run asks first (quitting loses the run); a second Ctrl+Q is the yes.
# CLOSE=sigterm: ended by SIGTERM (as a desktop session ends it) instead, for a flow that looks at
# a question still open (Reset, Start again): Ctrl+Q would put Quit's in its place.
if [ "${CLOSE:-}" = sigterm ]; then
  kill -TERM $app
else
  # A quitting app hides its window at once, then stops its workers (seconds under load); one
  # whose window stays for 4 s asked instead.
  xdotool key ctrl+q
  for _ in $(seq 40); do
    kill -0 $app 2> /dev/null && xdotool search --onlyvisible --pid $app > /dev/null 2>&1 || break
    sleep 0.1
  done
  if kill -0 $app 2> /dev/null && xdotool search --onlyvisible --pid $app > /dev/null 2>&1; then
    echo "asked before quitting"; xdotool key ctrl+q
  fi
fi
for _ in $(seq 600); do kill -0 $app 2> /dev/null || break; sleep 0.1; done
if kill -0 $app 2> /dev/null; then echo "Ctrl+Q did not close the app"; kill -9 $app; exit 1; fi
wait $app
echo "app exit code $?"
DRIVE

drive() {  # drive NAME SCENARIO KEYS... (SCREEN: the display's geometry, 1280x720x24 unless set)
  local name=$1 rc attempt
  for attempt in 1 2 3; do
    headless "${SCREEN:-1280x720x24}" "$WORK/$name.driver" bash "$WORK/drive.sh" "$RINGLAB" "$WORK" "$@"
    rc=$?
    [ $rc -eq 75 ] || break
    echo "note: $name: $(tail -1 "$WORK/$name.driver") (attempt $attempt): again on a new virtual display"
  done
  if [ $rc -ne 0 ]; then
    cat "$WORK/$name.driver" "$WORK/$name.log" 2> /dev/null | tail -20
    bad "$name: the driver failed"
    return 1
  fi
  python3 "$SRC/tests/integration/lib/xwd_to_png.py" "$WORK/$name.xwd" "$ART/classroom-$name.png"
  pgrep -f "ringlab worker.*" -P 1 > /dev/null && bad "$name: workers left behind"
  return 0
}

check_step() {  # check_step NAME: the ring on screen is at step 2 of 6, the workers took 3 steps
  python3 - "$WORK/$1.json" << 'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ring = s["ring"]
assert ring is not None, "no all-reduce on screen"
assert s["step_through"]["mode"] == "gated", s["step_through"]
assert ring["position"] == 2, ("position", ring["position"], s["step_through"])
assert ring["on_screen"] == "After ring step 2 of 6 (reduce-scatter 2 of 3)", ring["on_screen"]
assert ring["total_steps"] == 3, ("the workers took", ring["total_steps"], "steps")
# After two reduce-scatter steps no chunk holds all 4 ranks yet, and some hold 3.
counts = [len(c["contributors"]) for rank in ring["chunks"] for c in rank]
assert max(counts) == 3, counts
assert not s["failure_shown"], s
# The workers were held at the gate: the status gives no step time for such a run.
assert s["stepped"] is True, s["stepped"]
assert s["said"]["pace"] == "", s["said"]  # still in the demo all-reduce: no training step, no step time
assert s["said"]["status"] == "step-through: held at the gate", s["said"]
assert s["said"]["next_enabled"] is True, s["said"]
assert s["said"]["ring_next"] == "Next: Reduce-scatter, step 3 of 3", s["said"]
# The workers took step 3 while the screen shows step 2: one Next shows their step, the one after lets them on.
assert s["said"]["ring_gate"] == ("The workers are already past ring step 3, ahead of the screen: each Next shows one of "
                                  "their steps; once the screen is there, Next lets them take step 4"), s["said"]
PY
}

# No window manager (a kiosk, a bare X display) maximizes the window: at its default 1920x1080 on a
# smaller screen, its right part and bottom were off the screen. It now fits the screen's work area.
if SCREEN=1024x768x24 APP_SIZE=default drive fit four-ranks-gloo; then
  grep -qx "window size: 1024x768" "$WORK/fit.driver" && ok "a 1920x1080 window on a 1024x768 screen without a window manager: 1024x768" ||
    bad "the window on a 1024x768 screen: $(grep 'window size' "$WORK/fit.driver")"
fi

if drive keys step-through-four-ranks F5 wait-workers Right pause Right pause Right pause Left; then
  check_step keys && ok "Right x3, Left: step 2 of 6 on screen, 3 taken by the workers (classroom-keys.png)" ||
    bad "step-through with the arrow keys"
fi
grep -qx "window title: ringlab: Step through a 4-rank ring" "$WORK/keys.driver" &&
  ok "the window's title names the scenario" || bad "the window's title: $(grep 'window title' "$WORK/keys.driver")"
# A script given with --torch is what Start runs, ticked first in the Scenario menu; picking a
# scenario there goes back to ringlab's engine, and picking the script again switches Start back
# while the engine's finished run stays on screen, named as the engine's. The menu opens at
# (30, 10); at 1280x720 the script's line is at y 33 and "The seed's run: one rank" at y 96.
if APP_ARGS="--torch $SRC/examples/ddp_cpu.py" drive menupick four-ranks-gloo tap:30:10 tap:80:96 F5 pause pause pause \
  tap:30:10 tap:80:33; then
  python3 - "$WORK/menupick.json" << 'PY' && ok "a script given, the seed's scenario picked from the menu: Start ran the engine on 1 rank; the script picked back, the status names the engine's run (classroom-menupick.png)" || bad "picking a scenario while a script was given, and the script again"
import json, sys
s = json.load(open(sys.argv[1]))
assert [g["world_size"] for g in s["generations"]] == [1], s["generations"]  # the engine's run of the seed's scenario
assert len(s["epoch_mse"]) > 0, "the engine's run reported no epoch"
assert s["said"]["title"] == "PyTorch script: ddp_cpu.py", s["said"]
assert s["said"]["status"] == "ringlab's engine: finished", s["said"]
assert s["said"]["menu_bar"].startswith("ddp_cpu.py"), s["said"]
PY
  grep -qx "window title: ringlab: PyTorch script: ddp_cpu.py" "$WORK/menupick.driver" ||
    bad "the window's title after the picks: $(grep 'window title' "$WORK/menupick.driver")"
fi
if drive clicker step-through-four-ranks F5 wait-workers Page_Down pause Page_Down pause Page_Down pause Page_Up; then
  check_step clicker && ok "PageDown x3, PageUp: step 2 of 6 on screen (classroom-clicker.png)" ||
    bad "step-through with a presenter's clicker"
fi
# Flow 31: nine presses of Right in one burst (a clicker's quick presses, ms apart): six take the
# demo all-reduce to its end, the seventh moves on to all-reduce #2 before the workers have
# reported it, and the last two let its first two steps go once they do (they were lost).
if drive quickkeys step-through-four-ranks F5 wait-workers together:Right,Right,Right,Right,Right,Right,Right,Right,Right pause pause pause; then
  python3 - "$WORK/quickkeys.json" << 'PY' && ok "nine quick Right presses: all-reduce #2 after its step 2, each press counted (classroom-quickkeys.png)" || bad "quick Right presses past an all-reduce's end"
import json, sys
s = json.load(open(sys.argv[1]))
ring = s["ring"]
assert s["said"]["ring_number"] == "all-reduce #2", s["said"]
assert ring["position"] == 2 and ring["total_steps"] == 2, (ring["position"], ring["total_steps"], ring["on_screen"])
assert ring["on_screen"] == "After ring step 2 of 6 (reduce-scatter 2 of 3)", ring["on_screen"]
PY
fi
cat > "$WORK/long.json" << 'JSON'
{"title": {"en": "A long run to stop"}, "description": {"en": "Four ranks on gloo for many epochs."},
 "job": {"world_size": 4, "backend": "gloo", "algorithm": "ring", "epochs": 100000}}
JSON
if drive stop "$WORK/long.json" F5 wait-workers pause shift+F5 pause; then
  python3 - "$WORK/stop.json" << 'PY' && ok "F5 then Shift+F5: stopped, no failure shown (classroom-stop.png)" || bad "Stop"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "stopped", (s["run_phase"], s["run_message"])
assert not s["failure_shown"], ("a failure is shown after Stop", s["run_message"])
assert s["latest_step"] >= 0, s
# The workers stopped together at a step boundary, so their report came in: the step time shows.
assert s["us_per_step"] > 0, ("no step time after Stop", s["us_per_step"])
assert s["stepped"] is False, "a run never held at the gate counts as stepped through"
PY
fi
# Where the Samples field of four-ranks-gloo is at 1280x720: the app says, in an idle window's state
# (a place written into the test broke whenever a line was added above the field).
samples_at=""
drive fields four-ranks-gloo pause &&
  samples_at=$(python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["fields"]["samples"]; print("%d:%d" % (round(f["x"]), round(f["y"])))' "$WORK/fields.json") ||
  bad "the Samples field's place: not in the idle window's state"
echo "   the Samples field at $samples_at"
# Flow 26: from the World size slider's place at 4 ranks (of 1 to 16) a hand drags it 50 px right.
world_drag=$(python3 -c 'import json, sys; w = json.load(open(sys.argv[1]))["world_slider"]; x = w["x0"] + (w["x1"] - w["x0"]) * 3 / 15; print("%d:%d:%d" % (round(x), round(w["y"]), round(x) + 50))' "$WORK/fields.json") ||
  bad "the World size slider's place: not in the idle window's state"
if drive worldnote four-ranks-gloo drag:$world_drag pause; then
  python3 - "$WORK/worldnote.json" "$WORK/fields.json" << 'PY' && ok "World size dragged from 4 to more: said, and the fields under it did not move (classroom-worldnote.png)" || bad "the fields moved when the world changed"
import json, re, sys
s, before = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert s["job_world_size"] > 4, ("the drag did not change the world", s["job_world_size"])
# Before a run the title names the world Start will train (the scenario's own is 4).
assert re.search(rf"(\(now|changed here to) {s['job_world_size']} rank", s["said"]["title"]), s["said"]["title"]
for id, f in before["fields"].items():
    assert s["fields"][id]["y"] == f["y"], (id, "moved from", f["y"], "to", s["fields"][id]["y"])
print(f"   4 -> {s['job_world_size']} ranks; {len(before['fields'])} fields in place")
PY
fi
# Flow 28: a live change typed while the run is paused. Ctrl+click opens the World size slider for
# typing; "2" and Enter (taps, as xdotool or a quick hand gives them, shorter than a frame on this
# renderer: Enter was lost, the field stayed open and nothing changed) ask for the change. The
# paused workers stop for it at the gate, the new world's start and wait there, paused, and
# after Resume the run goes on with 2 ranks.
long_at=""
drive longfields "$WORK/long.json" F5 wait-workers pause &&  # running: the status's lines are above the slider
  long_at=$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); p, w = s["pause_button"], s["world_slider"]; print("%d:%d %d:%d" % (round(p["x"]), round(p["y"]), round(w["x0"] + 10), round(w["y"])))' "$WORK/longfields.json") ||
  bad "the Pause button's and the World size slider's places: not in the running window's state"
read -r pause_at world_at <<< "$long_at"
if drive pausedworld "$WORK/long.json" F5 wait-workers tap:$pause_at pause ctrltap:$world_at together:ctrl+a,2,Return pause pause; then
  python3 - "$WORK/pausedworld.json" << 'PY' && ok "paused, World size typed 2 and Enter: the new world's 2 ranks start, paused (classroom-pausedworld.png)" || bad "a world change typed while paused"
import json, re, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "paused", s["run_phase"]
assert s["job_world_size"] == 2, s["job_world_size"]
assert [g["world_size"] for g in s["generations"]] == [4, 2], s["generations"]
assert s["said"]["status"] == "paused at the gate", s["said"]
assert re.search(r"(\(now|changed here to) 2 ranks", s["said"]["title"]), s["said"]["title"]  # the world running now, not the scenario's 4
# Started and held, not "switching": the new world waits for Resume.
assert s["run_message"].startswith("2 ranks, gloo: started after "), s["run_message"]
assert s["run_message"].endswith(" steps (the step the ranks were held in was finished first), held at the gate until you resume"), s["run_message"]
# The ring still shows the 4 ranks' last all-reduce (the new world's first waits at the gate), and says so.
assert s["said"]["ring_gate"].startswith("The world now running (2 ranks) waits before its first ring step"), s["said"]
PY
fi
if drive resumedworld "$WORK/long.json" F5 wait-workers tap:$pause_at pause ctrltap:$world_at together:ctrl+a,2,Return pause tap:$pause_at pause pause pause; then
  python3 - "$WORK/resumedworld.json" << 'PY' && ok "... and after Resume the run goes on with 2 ranks (classroom-resumedworld.png)" || bad "a world change typed while paused, resumed"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "running", s["run_phase"]
assert [g["world_size"] for g in s["generations"]] == [4, 2], s["generations"]
assert "since step" in s["run_message"], s["run_message"]
PY
fi
# Paused, World size 1: one rank has no ring steps to hold at the gate, and trained on at full
# speed under "paused at the gate". Refused with the reason; the run stays paused in its world.
if drive pausedone "$WORK/long.json" F5 wait-workers tap:$pause_at pause ctrltap:$world_at together:ctrl+a,1,Return pause pause; then
  python3 - "$WORK/pausedone.json" << 'PY' && ok "paused, World size typed 1 and Enter: refused with the reason, still paused with 4 ranks (classroom-pausedone.png)" || bad "World size 1 while paused"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "paused", s["run_phase"]
assert s["job_world_size"] == 4, s["job_world_size"]
assert [g["world_size"] for g in s["generations"]] == [4], s["generations"]
assert s["run_message"].startswith("One rank has no ring steps to hold at the gate: paused, it would train on. Resume first"), s["run_message"]
# The ring (following) shows the last all-reduce finished; it says where the workers are.
assert s["said"]["ring_gate"] == "Paused: the workers wait at the gate before their next ring step; Resume lets them go", s["said"]
PY
fi
# ... and once Resume is pressed, the refusal ("Resume first") is not left standing over the run.
if drive pausedoneresumed "$WORK/long.json" F5 wait-workers tap:$pause_at pause ctrltap:$world_at together:ctrl+a,1,Return pause tap:$pause_at pause pause; then
  python3 - "$WORK/pausedoneresumed.json" << 'PY' && ok "... Resume then: running with 4 ranks, the refusal gone (classroom-pausedoneresumed.png)" || bad "the one-rank refusal after Resume"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "running", s["run_phase"]
assert [g["world_size"] for g in s["generations"]] == [4], s["generations"]
assert s["run_message"] == "", s["run_message"]
PY
fi
# Stop while paused: the run ends where it was held. Let go to the next step boundary, the ranks
# trained the step they were held in under the Stop, and the count moved on by one, unexplained.
# Ended at once, their step time comes from rank 0's steps, the pause left out.
# The same refusal after a first change, to 2 ranks, while still paused: the new world's "started
# ..., held at the gate" line was written over it every frame, and the change to 1 was undone
# without a word.
if drive pausedtwoone "$WORK/long.json" F5 wait-workers tap:$pause_at pause ctrltap:$world_at together:ctrl+a,2,Return pause pause pause ctrltap:$world_at together:ctrl+a,1,Return pause pause; then
  python3 - "$WORK/pausedtwoone.json" << 'PY' && ok "paused, World size 2, then 1: the second refused with the reason, still paused with 2 ranks (classroom-pausedtwoone.png)" || bad "a change to 1 rank after a change to 2, paused"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "paused" and s["job_world_size"] == 2, (s["run_phase"], s["job_world_size"])
assert s["run_message"].startswith("One rank has no ring steps to hold at the gate: paused, it would train on."), s["run_message"]
PY
fi
if drive pausedstop "$WORK/long.json" F5 wait-workers tap:$pause_at pause pause shift+F5 pause; then
  python3 - "$WORK/pausedstop.json" << 'PY' && ok "paused, then Stop: stopped at the step it was held in, with a step time (classroom-pausedstop.png)" || bad "Stop while paused"
import json, re, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "stopped" and s["said"]["status"] == "stopped by you", (s["run_phase"], s["said"])
assert s["step_at_stop"] > 0 and s["latest_step"] == s["step_at_stop"], (s["step_at_stop"], s["latest_step"])
assert re.fullmatch(r"[\d,]+ µs per step, the pause left out", s["said"]["pace"]), s["said"]
assert 0 < s["us_per_step"] < 100000, s["us_per_step"]  # the pause (over a second) left out
assert s["timeline"]["open_label"] == "paused", s["timeline"]  # ended where the pause held them, not "waiting"
PY
fi
# A value typed into the World size field and rubbed out with Escape changes nothing: the workers
# were restarted into the world they were in, and a change to it was marked on the loss plot.
if drive escapeworld "$WORK/long.json" F5 wait-workers ctrltap:$world_at together:ctrl+a,3 pause Escape pause pause; then
  python3 - "$WORK/escapeworld.json" << 'PY' && ok "World size typed 3, then Escape: no change, the workers untouched (classroom-escapeworld.png)" || bad "a typed World size rubbed out with Escape"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["job_world_size"] == 4, s["job_world_size"]
assert [g["world_size"] for g in s["generations"]] == [4], s["generations"]
assert s["run_phase"] == "running" and s["run_message"] == "", (s["run_phase"], s["run_message"])
PY
fi
# Flow 30: World size stepped with its - and + buttons (a drag lands one off on a narrow pane:
# 16 worlds on about 100 px at 1280x720). Before Start, two clicks on - take 4 to 2; while the
# run trains, four clicks on + take it to 8 with one restart of the workers (once the clicks
# pause), not four.
steppers=""
steppers=$(python3 -c 'import json, sys; i, r = (json.load(open(f))["world_slider"] for f in sys.argv[1:]); print("%d:%d %d:%d" % (round(i["minus_x"]), round(i["y"]), round(r["plus_x"]), round(r["y"])))' "$WORK/fields.json" "$WORK/longfields.json") ||
  bad "the World size buttons' places: not in the window's state"
read -r minus_at plus_at <<< "$steppers"
if drive minusworld four-ranks-gloo tap:$minus_at tap:$minus_at pause; then
  python3 - "$WORK/minusworld.json" << 'PY' && ok "World size - clicked twice before Start: 4 to 2 (classroom-minusworld.png)" || bad "World size's - button"
import json, re, sys
s = json.load(open(sys.argv[1]))
assert s["job_world_size"] == 2, s["job_world_size"]
assert s["run_phase"] == "idle", s["run_phase"]
assert re.search(r"(\(now|changed here to) 2 ranks", s["said"]["title"]), s["said"]["title"]
PY
fi
if drive plusworld "$WORK/long.json" F5 wait-workers tap:$plus_at tap:$plus_at tap:$plus_at tap:$plus_at pause pause pause; then
  python3 - "$WORK/plusworld.json" << 'PY' && ok "World size + clicked four times while training: one change, to 8 ranks (classroom-plusworld.png)" || bad "World size's + button, live"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["job_world_size"] == 8, s["job_world_size"]
assert [g["world_size"] for g in s["generations"]] == [4, 8], s["generations"]
assert s["run_phase"] == "running", (s["run_phase"], s["run_message"])
PY
fi
if drive memory four-ranks-gloo click:$samples_at ctrl+a type:10000000 Return pause F5 pause; then
  python3 - "$WORK/memory.json" << 'PY' && ok "10,000,000 samples, F5: asked first, nothing started (classroom-memory.png)" || bad "the memory question"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["start_asked_bytes"] > 1 << 30, s["start_asked_bytes"]
assert s["run_phase"] == "idle", (s["run_phase"], s["run_message"])
assert not s["refused_fields"], s["refused_fields"]
PY
fi
if drive samples four-ranks-gloo click:$samples_at ctrl+a type:-5 Return pause F5 pause; then
  python3 - "$WORK/samples.json" << 'PY' && ok "Samples -5: refused with its range on screen, and F5 starts nothing (classroom-samples.png)" || bad "Samples -5"
import json, sys
s = json.load(open(sys.argv[1]))
refused = s["refused_fields"]
assert "samples" in refused, refused
assert refused["samples"]["typed"] == -5 and refused["samples"]["reason"] == "Samples: from 1 to 100,000,000", refused
# At 1280x720 the field sits at the pane's bottom edge: the pane scrolled to show the reason.
assert refused["samples"]["reason_in_view"], refused
# F5 started nothing, and the status under Start says why (not only the greyed Start's tooltip).
assert s["start_waits_for_field"], s
assert s["said"]["status"].startswith("not ready: a field holds a value the job refuses"), s["said"]
assert s["run_phase"] == "idle", s["run_phase"]
PY
fi
# Escape closes a menu of the bar (Help, at 207,11 in classroom-help.png), as a click outside does;
# the first drive shows that the state reports an open menu at all.
if drive help four-ranks-gloo pause tap:207:11 pause; then
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert s["menu_open"] is True, s["menu_open"]' \
    "$WORK/help.json" && ok "Help opens (classroom-help.png)" || bad "Help did not open"
fi
if drive escape four-ranks-gloo pause tap:207:11 pause Escape pause; then
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert s["menu_open"] is False, s["menu_open"]' \
    "$WORK/escape.json" && ok "Escape closes the Help menu (classroom-escape.png)" || bad "Escape left the Help menu open"
fi
# An idle window draws only now and then (input, a run's events and animations draw at once):
# at 60 frames a second on a software renderer it took more than a core from the workers beside
# it. Open for about 8 s with nothing to do, it may draw a few frames a second, not 60.
if drive idle four-ranks-gloo pause pause pause pause; then
  python3 - "$WORK/idle.json" << 'PY' && ok "an idle window draws a few frames a second" || bad "the idle window"
import json, sys
w = json.load(open(sys.argv[1]))["window"]
rate = w["frames_drawn"] / w["open_s"]
print(f"   idle: {w['frames_drawn']} frames in {w['open_s']:.1f} s = {rate:.1f} a second")
assert w["open_s"] > 5, w
assert rate < 15, w
# And most of those frames are laid out as the one before: not rendered and presented again.
print(f"   idle: {w['frames_unchanged']} of them the same picture, not presented")
assert w["frames_unchanged"] >= w["frames_drawn"] // 2, w
PY
fi
# After a run, following shows its last all-reduce to its end and holds there, done (it used to
# loop it for ever, drawing at full rate with nothing new to show).
if drive afterrun four-ranks-gloo F5 pause pause pause pause pause pause; then
  python3 - "$WORK/afterrun.json" << 'PY' && ok "after a run: its last all-reduce held, done (classroom-afterrun.png)" || bad "after a run"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "finished", (s["run_phase"], s["run_message"])
assert s["ring"] is not None and s["ring"]["done"], s["ring"] and s["ring"]["on_screen"]
assert s["step_through"]["mode"] == "follow" and s["step_through"]["playing"] is False, s["step_through"]
PY
fi
# The hold at the end of a run is the view's own: F5 again, and the new run is followed live (the
# ring stood still on the old run's last all-reduce for every later run, until Space was pressed).
if drive again "$WORK/long.json" F5 wait-workers pause shift+F5 pause pause pause pause F5 wait-workers pause pause; then
  python3 - "$WORK/again.json" << 'PY' && ok "Start again after a run: the new run followed live (classroom-again.png)" || bad "start again"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "running", (s["run_phase"], s["run_message"])
assert s["step_through"]["mode"] == "follow" and s["step_through"]["playing"] is True, s["step_through"]
assert s["ring"] is not None, "no all-reduce on screen"
PY
fi
# F5 a moment after Shift+F5, while the workers still stop together (up to 2 s): the run stops,
# then the next one starts (the press was lost while the stopping run still counted as live).
if drive stopstart "$WORK/long.json" F5 wait-workers pause together:shift+F5,F5 pause pause pause pause; then
  python3 - "$WORK/stopstart.json" << 'PY' && ok "Shift+F5 then F5 at once: stopped, and the new run started (classroom-stopstart.png)" || bad "F5 right after Shift+F5"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "running", (s["run_phase"], s["run_message"])
assert s["latest_step"] >= 0, s["latest_step"]
PY
fi
if drive nextring step-through-four-ranks F5 wait-workers Right pause Right pause Right pause Right pause Right pause \
  Right pause Right pause; then
  python3 - "$WORK/nextring.json" << 'PY' && ok "gated, Right past the end: the next all-reduce before its first step (classroom-nextring.png)" || bad "gated Next into the next all-reduce"
import json, sys
s = json.load(open(sys.argv[1]))
st, ring = s["step_through"], s["ring"]
assert st["mode"] == "gated", st
assert ring is not None, "no all-reduce on screen"
assert st["collective_id"] > 1, ("still on the first all-reduce", st)
assert ring["position"] == 0 and ring["total_steps"] == 0, ("the workers were let into it", ring["position"], ring["total_steps"])
assert ring["on_screen"] == "Before ring step 1: each rank holds its own input", ring["on_screen"]
PY
fi
if drive resetview four-ranks-gloo F5 pause Right pause ctrl+r pause; then
  python3 - "$WORK/resetview.json" << 'PY' && ok "Ctrl+R after Replay: following live again, as the scenario opens (classroom-resetview.png)" || bad "Reset kept the step-through mode"
import json, sys
s = json.load(open(sys.argv[1]))
st = s["step_through"]
assert st["mode"] == "follow" and st["playing"] is True and st["gated"] is False, st
PY
fi
if drive quickstop four-ranks-gloo quickstop pause pause pause; then
  python3 - "$WORK/quickstop.json" << 'PY' && ok "Stop while the workers start: the status matches what was trained (classroom-quickstop.png)" || bad "a Stop at the start"
import json, sys
s = json.load(open(sys.argv[1]))
trained_all = len(s["epoch_mse"]) == 12 and s["latest_step"] == 23  # four-ranks-gloo: 12 epochs of 2 steps
print(f"   quick stop: {s['run_phase']}, {len(s['epoch_mse'])} epochs, last step {s['latest_step']}")
assert s["run_phase"] == ("finished" if trained_all else "stopped"), (s["run_phase"], len(s["epoch_mse"]), s["latest_step"])
assert not s["failure_shown"], s["run_message"]
PY
fi
# "Follow live" is the first mode of the Step-through pane, at 24,474 (see classroom-rerun.png).
if drive rerun step-through-four-ranks F5 wait-workers Right pause tap:24:474 pause pause pause pause F5 pause pause pause pause; then
  python3 - "$WORK/rerun.json" << 'PY' && ok "gated, then following, then Start again: the new run followed, not held before step 1 (classroom-rerun.png)" || bad "start again after following a gated run"
import json, sys
s = json.load(open(sys.argv[1]))
st, ring = s["step_through"], s["ring"]
assert s["run_phase"] == "finished", (s["run_phase"], s["run_message"])
assert st["mode"] == "follow" and not st["gated"], st
# Following: the new run's all-reduces play (or the last one is shown done), never held before step 1.
assert ring is not None and (ring["done"] or st["playing"] is True), (st, ring and ring["on_screen"])
PY
fi
if drive together step-through-four-ranks together:F5,Right wait-workers pause; then
  python3 - "$WORK/together.json" << 'PY' && ok "F5 and Right at once: the Next counts, one step taken (classroom-together.png)" || bad "a Next pressed with F5"
import json, sys
s = json.load(open(sys.argv[1]))
st, ring = s["step_through"], s["ring"]
assert st["mode"] == "gated", st
assert ring is not None, "no all-reduce on screen"
assert ring["position"] == 1, ("position", ring["position"], st)
assert ring["on_screen"] == "After ring step 1 of 6 (reduce-scatter 1 of 3)", ring["on_screen"]
assert ring["total_steps"] == 1, ("the workers took", ring["total_steps"], "steps")
PY
fi
cat > "$WORK/longgated.json" << 'JSON'
{"title": {"en": "A long run to step through"}, "description": {"en": "Four ranks on gloo for many epochs, held at the gate."},
 "job": {"world_size": 4, "backend": "gloo", "algorithm": "ring", "epochs": 100000}, "gated": true}
JSON
# "Follow live" and "Step-through (gated)" are the Step-through pane's first two modes, at 24,474
# and 24,499 (see classroom-regate.png).
if drive regate "$WORK/longgated.json" F5 wait-workers tap:24:474 pause pause tap:24:499 pause Right pause Right pause Right pause; then
  python3 - "$WORK/regate.json" << 'PY' && ok "followed live, then step-through again: the screen is where the workers are held (classroom-regate.png)" || bad "step-through switched on mid-run"
import json, sys
s = json.load(open(sys.argv[1]))
st, ring = s["step_through"], s["ring"]
assert st["mode"] == "gated" and st["gated"], st
assert ring is not None, "no all-reduce on screen"
# Trained live for seconds: thousands of steps, not the demo all-reduce.
assert s["latest_step"] > 100, s["latest_step"]
# The all-reduce of training step k is #k+2 (the demo all-reduce and the first broadcast come
# first): the screen is on the one the workers are in, not dozens behind it.
assert st["collective_id"] >= s["latest_step"], ("on screen", st["collective_id"], "workers at step", s["latest_step"])
assert ring["position"] >= 1, ("Right x3 did not step", ring["position"], ring["on_screen"])
PY
fi
if drive gatedstop step-through-four-ranks F5 wait-workers Right pause Right pause shift+F5 pause; then
  python3 - "$WORK/gatedstop.json" << 'PY' && ok "held at the gate, then Stop: the ring says the run ended there, Next is off (classroom-gatedstop.png)" || bad "Stop at the gate"
import json, sys
s = json.load(open(sys.argv[1]))
said, ring = s["said"], s["ring"]
assert s["run_phase"] == "stopped" and said["status"] == "stopped by you", (s["run_phase"], said, s["run_message"])
assert ring is not None and ring["total_steps"] == 2 and ring["position"] == 2, ring and (ring["total_steps"], ring["position"])
assert said["ring_next"] == "The run ended here: no rank took step 3", said
assert said["next_enabled"] is False, said
PY
fi
# Stopped while stepping through, then Follow live chosen: the Timeline still draws the ranks'
# last waits as held at the gate (they were drawn as "waiting" for a peer once the mode changed).
if drive gatedstopfollow step-through-four-ranks F5 wait-workers Right pause Right pause shift+F5 pause tap:24:474 pause; then
  python3 - "$WORK/gatedstopfollow.json" << 'PY' && ok "stopped at the gate, then Follow live: the Timeline's last waits are still held at the gate (classroom-gatedstopfollow.png)" || bad "the Timeline after a Stop at the gate"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "stopped" and s["step_through"]["mode"] == "follow", (s["run_phase"], s["step_through"])
assert s["timeline"]["open_label"] == "at the gate", s["timeline"]
# The ring keeps the all-reduce the run ended in (it said "Waiting for the first ring all-reduce").
assert s["ring"] is not None and s["ring"]["total_steps"] == 2, s["ring"]
PY
fi
if drive followed "$WORK/longgated.json" F5 wait-workers Right pause tap:24:474 pause pause pause; then
  python3 - "$WORK/followed.json" << 'PY' && ok "held at the gate, then Follow live: training, with the last second's step time (classroom-followed.png)" || bad "following after the gate"
import json, sys
s = json.load(open(sys.argv[1]))
said = s["said"]
assert s["step_through"]["mode"] == "follow" and not s["step_through"]["gated"], s["step_through"]
assert said["status"] == "training", said
assert said["pace"].startswith("≈ ") and said["pace"].endswith("µs per step (the last second)"), said
assert s["stepped"] is True, "the run was held at the gate for a while: its overall step time means nothing"
assert s["run_message"] == "Let go of the gate: the workers train on at full speed.", s["run_message"]
PY
fi
# Replay chosen while the gate holds a short run's workers lets them go: it trains to its end at
# once, and the status says why rather than leave "finished" unexplained; in the past once it has
# ended (Follow live chosen afterwards, "Replay does not hold the workers" read as advice about a
# run that was over).
if drive replaylets step-through-four-ranks F5 wait-workers Right pause tap:24:524 pause pause tap:24:474 pause; then
  python3 - "$WORK/replaylets.json" << 'PY' && ok "held at the gate, then Replay: the run trained on, and says so, then Follow live (classroom-replaylets.png)" || bad "Replay chosen at the gate"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["step_through"]["mode"] == "follow", s["step_through"]
assert s["run_phase"] == "finished", s["run_phase"]
assert s["run_message"] == "Replay let go of the gate: the workers trained on to the end at full speed.", s["run_message"]
PY
fi
# Replay during a fast live run (2 ranks on MPI, tens of thousands of steps a second): the ring
# following live animates an all-reduce that the log and the timeline have long let go of, so
# Replay once began "older than the 511 kept" beside an empty Timeline, and so did every kept one
# the slider went to. It now starts from the newest whole all-reduce of its copy, and the
# Timeline keeps the spans of every all-reduce the copy holds while the run goes on. (Its ranks
# are mpirun's children, not the app's: "wait-workers" would not see them; the pauses wait.)
cat > "$WORK/fastmpi.json" << 'JSON'
{"title": {"en": "A fast run"}, "description": {"en": "Two ranks on MPI for many epochs."},
 "job": {"world_size": 2, "backend": "mpi", "algorithm": "ring", "epochs": 1000000}}
JSON
# Then Stop: the all-reduce on screen stays within the slider's reach (it read "older than the 512
# kept", the slider at its far left, once the run's own log took over from the copy).
if drive fastreplay "$WORK/fastmpi.json" F5 pause pause pause pause pause tap:24:524 pause Left Left Left Left pause pause \
     shift+F5 pause pause; then
  python3 - "$WORK/fastreplay.json" << 'PY' && ok "Replay in a fast live run: a kept all-reduce, its spans on the Timeline, four Previous and a Stop later too (classroom-fastreplay.png)" || bad "Replay during a fast live run"
import json, re, sys
s = json.load(open(sys.argv[1]))
said, tl = s["said"], s["timeline"]
assert s["run_phase"] == "stopped" and s["step_through"]["mode"] == "replay", (s["run_phase"], s["step_through"])
assert re.fullmatch(r"[\d,]+ of [\d,]+", said["replay_slot"]), said["replay_slot"]
assert s["ring"] is not None and s["step_through"]["collective_id"] > 0, s["step_through"]
assert tl["replay_marked"] and tl["spans_shown"] > 0, tl
PY
fi
# Replay chosen before Start scrubbed a copy of the new run's first few all-reduces for the whole
# run ("6 of 6", the start-up's slow one): a new run is followed live.
if drive replaystart "$WORK/fastmpi.json" tap:24:524 pause F5 pause pause pause; then
  python3 - "$WORK/replaystart.json" << 'PY' && ok "Replay chosen, then Start: the new run is followed live (classroom-replaystart.png)" || bad "Start with Replay chosen"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "running" and s["step_through"]["mode"] == "follow", (s["run_phase"], s["step_through"])
assert s["said"]["replay_slot"] == "", s["said"]
PY
fi
if drive followedstop "$WORK/longgated.json" F5 wait-workers Right pause tap:24:474 pause pause shift+F5 pause; then
  python3 - "$WORK/followedstop.json" << 'PY' && ok "held at the gate a moment, followed, stopped: the step time of the steps the gate did not hold (classroom-followedstop.png)" || bad "step time after a short stretch at the gate"
import json, re, sys
s = json.load(open(sys.argv[1]))
said = s["said"]
assert s["run_phase"] == "stopped", s["run_phase"]
m = re.fullmatch(r"([\d,]+) µs per step over the ([\d,]+) steps the gate did not hold", said["pace"])
assert m, said
# Whole microseconds, rounded half away from zero, thousands grouped (1,234 on a loaded machine).
assert m.group(1) == "{:,}".format(int(s["ungated_us_per_step"] + 0.5)), (said, s["ungated_us_per_step"])
assert 0 < int(m.group(2).replace(",", "")) <= s["latest_step"] + 1, (said, s["latest_step"])  # latest_step counts from 0
PY
fi
# "Forget set_epoch" is the Sampler pane's first check box, at 899,281 (see classroom-forget.png).
# A live change while stepping through: World size typed 3 with the workers held at the gate. The
# new world's ranks start held too; Next goes on into its first all-reduce. The status said
# "switching to 3 ranks" all along, and the ring said the new world had no all-reduce yet beside
# a line saying the workers had moved on to its #2.
gated_world_at=""
drive gatedfields "$WORK/longgated.json" F5 wait-workers pause &&
  gated_world_at=$(python3 -c 'import json, sys; w = json.load(open(sys.argv[1]))["world_slider"]; print("%d:%d" % (round(w["x0"] + 10), round(w["y"])))' "$WORK/gatedfields.json") ||
  bad "the World size slider's place while stepping through: not in the window's state"
if drive gatedworld "$WORK/longgated.json" F5 wait-workers Right pause Right pause ctrltap:$gated_world_at together:ctrl+a,3,Return \
     pause pause Right pause Right pause Right pause Right pause Right pause Right pause Right pause Right pause Right pause; then
  python3 - "$WORK/gatedworld.json" << 'PY' && ok "stepping through, World size typed 3: the new world started held, and Next steps through its all-reduces (classroom-gatedworld.png)" || bad "a live change while stepping through"
import json, sys
s = json.load(open(sys.argv[1]))
assert [g["world_size"] for g in s["generations"]] == [4, 3], s["generations"]
assert s["run_message"] == "3 ranks, gloo: started, its steps held at the step-through gate", s["run_message"]
assert s["said"]["ring_number"].endswith(" since the change to 3 ranks"), s["said"]
assert "has no all-reduce yet" not in s["said"]["ring_gate"], s["said"]
PY
fi
# ... and Stop pressed while the new world waits at the gate before its first ring step: the
# status's "started, its steps held at the step-through gate" stood under "stopped by you", and the
# ring's line saying whose all-reduce it shows went, leaving 4 rank cards beside "3 ranks".
if drive gatedworldstop "$WORK/longgated.json" F5 wait-workers Right pause Right pause ctrltap:$gated_world_at together:ctrl+a,3,Return \
     pause pause shift+F5 pause pause; then
  python3 - "$WORK/gatedworldstop.json" << 'PY' && ok "... Stop before the new world's first ring step: stopped, and the ring says whose all-reduce it shows (classroom-gatedworldstop.png)" || bad "Stop after a live change while stepping through"
import json, sys
s = json.load(open(sys.argv[1]))
assert [g["world_size"] for g in s["generations"]] == [4, 3], s["generations"]
assert s["run_phase"] == "stopped" and s["said"]["status"] == "stopped by you", (s["run_phase"], s["said"]["status"])
assert "held at the step-through gate" not in s["run_message"], s["run_message"]
assert s["said"]["ring_gate"].startswith("The run ended before the newest world (3 ranks) "), s["said"]["ring_gate"]
assert s["said"]["ring_gate"].endswith(": shown, the last all-reduce before the change"), s["said"]["ring_gate"]
PY
fi
# Text made larger during a run (Ctrl+= five times, 1.6x) with the scenario's description open:
# it pushed the status ("training", "stopped by you") below the Controls pane's edge, half cut. The
# description folds when the pane loses the room for it.
cat > "$WORK/longdesc.json" << 'JSON'
{"title": {"en": "Four ranks on gloo, for long"}, "description": {"en": "Four real processes train the seed's model with the ring all-reduce over gloo. Each rank gets 64 of the 256 samples; every step the gradients are summed around the ring and divided by 4."},
 "job": {"world_size": 4, "backend": "gloo", "algorithm": "ring", "epochs": 100000}}
JSON
if drive zoomed "$WORK/longdesc.json" F5 wait-workers ctrl+equal ctrl+equal ctrl+equal ctrl+equal ctrl+equal pause pause; then
  python3 - "$WORK/zoomed.json" << 'PY' && ok "Ctrl+= five times during a run: the status stays in view (classroom-zoomed.png)" || bad "the status after Ctrl+="
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "running", s["run_phase"]
assert s["said"]["status"] == "training" and s["said"]["status_in_view"] is True, s["said"]
PY
fi
if CLOSE=sigterm drive forget "$WORK/long.json" F5 wait-workers pause tap:899:281 pause; then
  python3 - "$WORK/forget.json" << 'PY' && ok "Forget set_epoch mid-run: asked first, the run goes on meanwhile (classroom-forget.png)" || bad "Forget set_epoch mid-run"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["restart_asked"] is True, "the run was restarted (or nothing happened) without asking"
assert s["job_set_epoch"] is False, s["job_set_epoch"]
assert s["run_phase"] == "running" and s["latest_step"] > 100, (s["run_phase"], s["latest_step"])
PY
fi
if drive forgetkeep "$WORK/long.json" F5 wait-workers pause tap:899:281 pause Escape pause; then
  python3 - "$WORK/forgetkeep.json" << 'PY' && ok "Forget set_epoch, then Escape: the run and set_epoch kept (classroom-forgetkeep.png)" || bad "Escape on the restart question"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["restart_asked"] is False and s["job_set_epoch"] is True, (s["restart_asked"], s["job_set_epoch"])
assert s["run_phase"] == "running" and s["latest_step"] > 100, (s["run_phase"], s["latest_step"])
PY
fi
cat > "$WORK/mpi-scenario.json" << 'JSON'
{"title": {"en": "Two ranks on MPI for long"}, "description": {"en": "Steps of tens of microseconds."},
 "job": {"world_size": 2, "backend": "mpi", "algorithm": "ring", "epochs": 100000}}
JSON
if drive longmpi "$WORK/mpi-scenario.json" F5 pause pause pause pause pause pause shift+F5 pause; then
  python3 - "$WORK/longmpi.json" << 'PY' && ok "two ranks on MPI: the window keeps drawing, its frames bounded (classroom-longmpi.png)" || bad "a fast MPI run"
import json, sys
s = json.load(open(sys.argv[1]))
w = s["window"]
assert s["latest_step"] > 1000, s["latest_step"]
assert w["largest_frame_vertices"] < 1_000_000, w
assert s["run_phase"] == "stopped", (s["run_phase"], s["run_message"])
PY
fi
if drive gatedplay step-through-four-ranks F5 wait-workers Right pause space pause; then
  python3 - "$WORK/gatedplay.json" << 'PY' && ok "Play at the gate: the status says the workers are let through step by step (classroom-gatedplay.png)" || bad "the status under gated Play"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["step_through"]["mode"] == "gated" and s["step_through"]["playing"] is True, s["step_through"]
assert s["said"]["status"] == "step-through: Play lets one ring step through at a time", s["said"]
PY
fi
cat > "$WORK/timeline-long.json" << 'JSON'
{"title": {"en": "A long run, its timeline"}, "job": {"world_size": 4, "backend": "gloo", "algorithm": "ring", "epochs": 100000},
 "view": {"focus": "timeline"}}
JSON
# Each rank keeps its newest 60,000 spans, about 4,000 steps: by 9 s into the run some are gone.
if drive letgo "$WORK/timeline-long.json" F5 wait-workers pause pause pause pause pause tap:297:63 drag:600:400:1000 \
     drag:600:400:1000 wheel-out:800:400:80 pause; then
  python3 - "$WORK/letgo.json" << 'PY' && ok "a long run's timeline, dragged back and zoomed out: the stretch let go is veiled and says so (classroom-letgo.png)" || bad "the timeline's let-go stretch"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["timeline"]
assert not t["follow"], t
assert t["let_go_shown"], t
assert t["begin_ms"] >= 0, t  # zoomed all the way out: the run, not time before it
assert s["latest_step"] > 4000, s["latest_step"]
PY
fi
if drive held "$WORK/timeline-long.json" F5 wait-workers pause tap:297:63 pause pause pause pause pause; then
  python3 - "$WORK/held.json" << 'PY' && ok "a timeline held still through 7 s of a long run: what it showed is still there (classroom-held.png)" || bad "the held timeline"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["timeline"]
assert not t["follow"], t
assert t["spans_shown"] > 0 and not t["let_go_shown"], t
assert s["holdings"]["timeline_spans"] <= 4 * 70000, s["holdings"]  # still bounded
assert s["latest_step"] > 4000, s["latest_step"]  # long enough for spans to be let go
PY
fi
if CLOSE=sigterm drive resetask "$WORK/long.json" F5 wait-workers pause ctrl+r pause; then
  python3 - "$WORK/resetask.json" << 'PY' && ok "Ctrl+R during a run: asked first, the run goes on (classroom-resetask.png)" || bad "Reset during a run"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["reset_asked"] and s["run_phase"] == "running", (s["reset_asked"], s["run_phase"])
assert s["said"]["reset_meanwhile"] == "Until you answer, the run goes on.", s["said"]
PY
fi
# Stepping through, the workers wait at the gate for Next: a question asked then says they stay
# held, not that the run goes on (it said so, and a class saw nothing go on).
if CLOSE=sigterm drive gatedreset step-through-four-ranks F5 wait-workers Right pause ctrl+r pause; then
  python3 - "$WORK/gatedreset.json" << 'PY' && ok "Ctrl+R while stepping through: asked, the workers said to stay held at the gate (classroom-gatedreset.png)" || bad "Reset while stepping through"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["reset_asked"] and s["run_phase"] == "running", (s["reset_asked"], s["run_phase"])
assert s["said"]["reset_meanwhile"] == "Until you answer, the workers stay held at the step-through gate.", s["said"]
assert s["ring"]["total_steps"] == 1, ("the workers took", s["ring"]["total_steps"], "steps while asked")
PY
fi
if drive resetkeep "$WORK/long.json" F5 wait-workers pause ctrl+r pause Escape pause; then
  python3 - "$WORK/resetkeep.json" << 'PY' && ok "Ctrl+R, then Escape: the run kept (classroom-resetkeep.png)" || bad "Reset, then Escape"
import json, sys
s = json.load(open(sys.argv[1]))
assert not s["reset_asked"] and s["run_phase"] == "running" and s["latest_step"] > 0, (s["reset_asked"], s["run_phase"])
PY
fi
# Ctrl+Q while Reset is asked: Quit's question takes its place (both asked at once, each took the
# screen from the other every frame, and neither was seen); the closing Ctrl+Q is its yes.
if drive resetquit "$WORK/long.json" F5 wait-workers pause ctrl+r pause ctrl+q pause; then
  python3 - "$WORK/resetquit.json" "$WORK/resetquit.driver" << 'PY' && ok "Ctrl+R, then Ctrl+Q: Quit's question in Reset's place, and Ctrl+Q again quits (classroom-resetquit.png)" || bad "Ctrl+Q while Reset was asked"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["quit_asked"] and not s["reset_asked"], (s["quit_asked"], s["reset_asked"])
assert s["said"]["quit_meanwhile"] == "Until you answer, the run goes on. Ctrl+Q again quits.", s["said"]
assert "asked before quitting" not in open(sys.argv[2]).read(), "the closing Ctrl+Q did not quit at once"
PY
fi
# Flow 29: Ctrl+Q during a run asks first, as Reset does (one key ended a lesson's run); a second
# Ctrl+Q quits at once, Escape keeps the run.
if drive quitask "$WORK/long.json" F5 wait-workers pause ctrl+q pause; then
  python3 - "$WORK/quitask.json" "$WORK/quitask.driver" << 'PY' && ok "Ctrl+Q during a run: asked first, the run goes on; Ctrl+Q again quits (classroom-quitask.png)" || bad "Ctrl+Q during a run"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["quit_asked"] and s["run_phase"] == "running", (s["quit_asked"], s["run_phase"])
assert "asked before quitting" not in open(sys.argv[2]).read(), "the second Ctrl+Q did not quit at once"
PY
fi
if drive quitkeep "$WORK/long.json" F5 wait-workers pause ctrl+q pause Escape pause; then
  python3 - "$WORK/quitkeep.json" "$WORK/quitkeep.driver" << 'PY' && ok "Ctrl+Q, then Escape: the run kept, and the next Ctrl+Q asks again (classroom-quitkeep.png)" || bad "Ctrl+Q, then Escape"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run_phase"] == "running" and s["latest_step"] > 0, (s["run_phase"], s["latest_step"])
assert "asked before quitting" in open(sys.argv[2]).read(), "Escape did not close the question, or the next Ctrl+Q did not ask"
PY
fi
# A run that ends while Quit's question is open leaves the question open: the app quit by itself
# there, the finished run's curves gone with the window and the question never answered.
cat > "$WORK/quick.json" << 'JSON'
{"title": {"en": "A run that ends soon"}, "job": {"world_size": 2, "backend": "gloo", "algorithm": "ring", "epochs": 20000}}
JSON
if drive quitend "$WORK/quick.json" F5 pause ctrl+q wait-ended pause; then
  python3 - "$WORK/quitend.json" << 'PY' && ok "Ctrl+Q as a run starts, and the run ends meanwhile: still asked, the app there (classroom-quitend.png)" || bad "a run ending while Quit was asked"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["quit_asked"] and s["run_phase"] == "finished" and s["latest_step"] > 0, (s["quit_asked"], s["run_phase"])
PY
fi
# Reset's question likewise: the run that ended meanwhile was reset, its curves forgotten, unasked.
if CLOSE=sigterm drive resetend "$WORK/quick.json" F5 pause ctrl+r wait-ended pause; then
  python3 - "$WORK/resetend.json" << 'PY' && ok "Ctrl+R as a run starts, and the run ends meanwhile: still asked, the run kept (classroom-resetend.png)" || bad "a run ending while Reset was asked"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["reset_asked"] and s["run_phase"] == "finished" and s["latest_step"] > 0, (s["reset_asked"], s["run_phase"], s["latest_step"])
PY
fi
if drive panes "$WORK/long.json" F5 wait-workers pause pause; then
  python3 - "$WORK/panes.json" "$WORK/stop.json" "$WORK/panes.xwd" "$WORK/stop.xwd" "$SRC/tests/integration/lib" << 'PY' &&
import json, sys
sys.path.insert(0, sys.argv[5])
from xwd_to_png import read_xwd
live, stopped = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert live["run_phase"] == "running", live["run_phase"]
assert live["window"]["side_panes_reused"] > 0, live["window"]
# The status shows the step time of the last second while the run goes on.
assert 0 < live["live_us_per_step"] < 1e6, live["live_us_per_step"]
assert stopped["run_phase"] == "stopped", stopped["run_phase"]
_, _, a = read_xwd(sys.argv[3])
_, _, b = read_xwd(sys.argv[4])
def pane(s, id):
    return next(p for p in s["panes"] if p["id"] == id)
compared = 0
for id in ("training", "sampler", "timeline"):
    p, q = pane(live, id), pane(stopped, id)
    assert not p["every_frame"], p
    assert (p["x0"], p["y0"], p["x1"], p["y1"]) == (q["x0"], q["y0"], q["x1"], q["y1"]), (p, q)
    x0, x1, y0 = int(p["x0"]), int(p["x1"]), int(p["y0"])
    # The title row and the row of check boxes under it: the same in both runs. A texture's blend
    # may round an anti-aliased edge one step of 255 the other way; nothing else may differ.
    rows = range(y0, y0 + 44)
    differ = sum(abs(a[y][i] - b[y][i]) > 2 for y in rows for i in range(3 * x0, 3 * x1))
    assert differ == 0, f"{id}: {differ} colour values in the first 44 rows differ between the live (reused) and the stopped (fresh) pane"
    ink = sum(len(set(a[y][3 * x0:3 * x1][i:i + 3] for i in range(0, 3 * (x1 - x0), 3))) > 1 for y in rows)
    assert ink > 10, f"{id}: only {ink} rows with anything drawn: nothing to compare"
    compared += 1
print(f"   {live['window']['side_panes_reused']} side panes reused; {compared} panes' first rows the same as drawn afresh")
PY
    ok "a live run: side panes reused between refreshes, in place and the right way up (classroom-panes.png)" ||
    bad "side panes shown from their last drawing"
fi
if drive partial "$WORK/long.json" F5 wait-workers pause pause shift+F5 settled:partial.settled.xwd refresh; then
  python3 - "$WORK/partial.json" "$WORK/partial.settled.xwd" "$WORK/partial.xwd" "$SRC/tests/integration/lib" << 'PY' &&
import json, sys
sys.path.insert(0, sys.argv[4])
from xwd_to_png import read_xwd
s = json.load(open(sys.argv[1]))
w = s["window"]
assert s["run_phase"] == "stopped", s["run_phase"]
presented = w["frames_drawn"] - w["frames_unchanged"]
assert w["frames_in_part"] > presented // 3, w
width, height, still = read_xwd(sys.argv[2])
_, _, whole = read_xwd(sys.argv[3])
red = bytes([255, 0, 0])
assert sum(row.count(red) for row in whole) < width * height // 100, "the window did not draw itself again"
differ = [y for y in range(height) if still[y] != whole[y]]
if differ:
    xs = [x for y in differ for x in range(width) if still[y][3 * x:3 * x + 3] != whole[y][3 * x:3 * x + 3]]
    raise AssertionError(f"{len(differ)} rows differ between the frames in part and the whole frame, in x {min(xs)}..{max(xs)}, "
                         f"y {differ[0]}..{differ[-1]} (classroom-partial-still.png against classroom-partial.png)")
print(f"   {w['frames_in_part']} of {presented} frames presented in part, "
      f"{w['pixels_presented'] / presented / (width * height):.2f} of the screen a frame on average")
PY
    ok "frames in part leave the picture a whole frame draws (classroom-partial.png)" || {
      python3 "$SRC/tests/integration/lib/xwd_to_png.py" "$WORK/partial.settled.xwd" "$ART/classroom-partial-still.png"
      bad "frames presented in part"
    }
fi
# A theme picked from the View menu during a live run, the mouse then kept still: frames redraw
# only the squares of the screen whose triangles changed, and a square no triangle touches shows
# the colour the frame is cleared to. The whole window must take the new theme: no square of the
# old light background may stay (the menu at 1280x720: View at (90, 10), Dark theme at (112, 153)).
if drive themelive "$WORK/long.json" F5 wait-workers pause tap:90:10 tap:112:153 pause pause; then
  python3 - "$WORK/themelive.xwd" "$SRC/tests/integration/lib" << 'PY' && ok "a dark theme picked during a live run: the whole window dark, no square of the old background left (classroom-themelive.png)" || bad "a theme picked during a live run"
import sys
sys.path.insert(0, sys.argv[2])
from xwd_to_png import read_xwd
width, height, rows = read_xwd(sys.argv[1])
def px(x, y):
    return rows[y][3 * x:3 * x + 3]
dark = sum(sum(px(x, y)) < 3 * 80 for y in range(0, height, 8) for x in range(0, width, 8))
assert dark > (width // 8) * (height // 8) // 2, f"only {dark} of the sampled pixels are dark: the theme did not change"
left = []
for y0 in range(0, height - 31, 32):
    for x0 in range(0, width - 31, 32):
        c = px(x0, y0)
        if min(c) > 200 and all(rows[y][3 * x0:3 * x0 + 96] == c * 32 for y in range(y0, y0 + 32)):
            left.append((x0, y0, tuple(c)))
assert not left, f"{len(left)} squares of the old light background left, the first at {left[:3]}"
PY
fi
exit $fail
