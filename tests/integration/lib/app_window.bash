# Sourced by the drivers of the GUI tests that run inside a virtual display (not a test itself).
#
# await_display: waits (bounded) for $DISPLAY to answer; exits 75 when it does not, for the test
# to start the drive again on a new display (a fresh Xvfb on a loaded machine is now and then
# unusable: that is the display, not the app).
await_display() {
  for _ in $(seq 100); do xdotool getdisplaygeometry > /dev/null 2>&1 && break; sleep 0.1; done
  xdotool getdisplaygeometry > /dev/null 2>&1 || { echo "the virtual display $DISPLAY does not answer"; exit 75; }
}

# open_app_window LOG CMD...: starts CMD (the app) in the background, its output in LOG, and waits
# (bounded) for its window; sets `app` (its pid) and `wid` (its window), or exits 1 saying why.
open_app_window() {
  local log=$1
  shift
  "$@" > "$log" 2>&1 &
  app=$!
  wid=""
  for _ in $(seq 600); do
    wid=$(xdotool search --onlyvisible --name "^ringlab: " 2> /dev/null | head -1)
    [ -n "$wid" ] && break
    sleep 0.1
  done
  [ -n "$wid" ] || { echo "the window did not open: $(tail -2 "$log")"; kill $app; exit 1; }
}

# quit_app_window LOG: Ctrl+Q (twice when a run trains: the first asks), and the app must end
# within 10 s with exit code 0.
quit_app_window() {
  xdotool key --window "$wid" ctrl+q
  for _ in $(seq 15); do kill -0 $app 2> /dev/null || break; sleep 0.1; done
  kill -0 $app 2> /dev/null && xdotool key --window "$wid" ctrl+q
  for _ in $(seq 100); do kill -0 $app 2> /dev/null || break; sleep 0.1; done
  kill -0 $app 2> /dev/null && { echo "the app did not quit on Ctrl+Q"; kill -9 $app; exit 1; }
  wait $app || { echo "the app ended with exit code $?: $(tail -2 "$1")"; exit 1; }
}
