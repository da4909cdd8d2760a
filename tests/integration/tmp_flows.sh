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
#     second's step time, not "held at the gate" or "no µs per step".
# 19. The same run stopped after it followed live again: the status gives the run's step time,
#     saying how many all-reduces were held at the gate and how much they can have added.
# 20. "Forget set_epoch" ticked during a long run: the app asks before it starts the run again;
#     Escape keeps the run going and the setting as it was.
# 21. Two ranks on MPI, whose steps outrun the app's intake (it drops events, and says so): the
#     window goes on drawing, and no frame's draw data grows with the run (a collective whose
#     end was dropped once filled memory with the stripes of a bar millions of pixels long).
# 22. Play at the gate: the status says Play lets one ring step through at a time, not "held".
# 23. A long run in the big Timeline: Follow unticked, the view dragged back and zoomed all the
#     way out. The stretch whose spans were let go (the timeline keeps each rank's newest) is
#     veiled and says so, instead of showing ranks that did nothing; the axis starts at 0.
# 24. The same run's timeline with Follow unticked and left alone for 7 s, while the run's new
#     spans push the old ones out: the moment the class froze stays on screen.
set -uo pipefail
RINGLAB=$(realpath "$1")
SRC=$2
source "$(dirname "$0")/lib/headless.bash"
require_headless_app "$RINGLAB"
for tool in xdotool xwd; do
  command -v $tool > /dev/null || { echo "SKIP: $tool is not installed (apt-get install xdotool x11-apps)"; exit 77; }
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
"$ringlab" gui --scenario "$scenario" --width 1280 --height 720 --state-json "$out/$name.json" > "$out/$name.log" 2>&1 &
app=$!
wid=""
for _ in $(seq 600); do
  wid=$(xdotool search --onlyvisible --name "ringlab: DDP" 2> /dev/null | head -1)
  [ -n "$wid" ] && break
  kill -0 $app 2> /dev/null || break
  sleep 0.1
done
if [ -z "$wid" ]; then
  kill $app 2> /dev/null
  grep -q "Failed to open display" "$out/$name.log" && { echo "the app could not open $DISPLAY"; exit 75; }
  echo "no window appeared"; cat "$out/$name.log"; exit 1
fi
xdotool windowfocus --sync "$wid"
sleep 1  # the first frames
for key in "$@"; do
  case $key in
    wait-workers)
      for _ in $(seq 600); do [ "$(pgrep -P $app -fc 'ringlab worker')" -ge 4 ] && break; sleep 0.1; done
      sleep 2 ;;  # they join the group and reach the gate
    pause) sleep 1.5 ;;
    quickstop) xdotool key F5; sleep 0.15; xdotool key shift+F5; sleep 0.3 ;;  # Stop while the workers start
    click:*) IFS=: read -r _ x y <<< "$key"; xdotool mousemove "$x" "$y" click --repeat 2 1; sleep 0.3 ;;
    tap:*) IFS=: read -r _ x y <<< "$key"; xdotool mousemove "$x" "$y" click 1; sleep 0.3 ;;
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
xdotool key ctrl+q
for _ in $(seq 600); do kill -0 $app 2> /dev/null || break; sleep 0.1; done
if kill -0 $app 2> /dev/null; then echo "Ctrl+Q did not close the app"; kill -9 $app; exit 1; fi
wait $app
echo "app exit code $?"
DRIVE

drive() {  # drive NAME SCENARIO KEYS...
  local name=$1 rc attempt
  for attempt in 1 2 3; do
    headless 1280x720x24 "$WORK/$name.driver" bash "$WORK/drive.sh" "$RINGLAB" "$WORK" "$@"
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
# The workers were held at the gate: the status gives no µs per step for such a run.
assert s["stepped"] is True, s["stepped"]
assert s["said"]["pace"] == "", s["said"]  # still in the demo all-reduce: no training step, no step time
assert s["said"]["status"] == "step-through: held at the gate", s["said"]
assert s["said"]["next_enabled"] is True, s["said"]
assert s["said"]["ring_next"] == "Next: Reduce-scatter, step 3 of 3", s["said"]
PY
}

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
exit $fail
