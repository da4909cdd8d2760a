# Sourced by the GUI tests (not a test itself).
#
# headless GEOMETRY OUT CMD...: runs CMD under a fresh virtual display (xvfb-run -a), its output in
# OUT, and returns CMD's own exit code. xvfb-run's own code is not used: it is non-zero when it
# merely fails to clean up its temporary directory after CMD has finished. 125: CMD never ran.
headless() {
  local geometry=$1 out=$2 rc_file rc
  shift 2
  rc_file=$(mktemp)
  # A random first display number: two tests starting at once would otherwise both pick :99.
  # -noreset: by default Xvfb resets itself whenever its last client leaves, and on a loaded
  # machine a client that connects during that reset is refused ("Failed to open display"): a
  # driver's xdotool probe followed at once by the app hit it in CI.
  xvfb-run -a -n $((100 + RANDOM % 800)) -s "-screen 0 $geometry -noreset" bash -c '"$@"; echo $? >"$0"' "$rc_file" "$@" >"$out" 2>&1
  rc=$(cat "$rc_file" 2>/dev/null)
  rm -f "$rc_file"
  return "${rc:-125}"
}

# headless_again GEOMETRY OUT CMD...: headless, and again on a new virtual display (three tries in
# all) while CMD exits 75, the code the drivers give for a display that never answered
# (lib/app_window.bash's await_display). Returns CMD's last exit code.
headless_again() {
  local rc tries
  for tries in 1 2 3; do
    headless "$@"
    rc=$?
    [ $rc = 75 ] || break
    echo "note: the virtual display did not answer (try $tries); again on a new one"
  done
  return $rc
}

# require_headless_app RINGLAB: exits 77 (skipped, with the reason) unless RINGLAB was built
# with the desktop app and xvfb-run and python3 (which reads the app's state and screenshots)
# are installed.
require_headless_app() {
  if env -u DISPLAY "$1" gui --frames 1 2>&1 | grep -q "built without the desktop app"; then
    echo "SKIP: this ringlab was built without the desktop app"
    exit 77
  fi
  command -v xvfb-run >/dev/null 2>&1 || { echo "SKIP: xvfb-run is not installed (apt-get install xvfb)"; exit 77; }
  command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to read the app's state and screenshots"; exit 77; }
}
