# Sourced by the GUI tests (not a test itself).
#
# headless GEOMETRY OUT CMD...: runs CMD under a fresh virtual display (xvfb-run -a), its output in
# OUT, and returns CMD's own exit code. xvfb-run's own code is not used: it is non-zero when it
# merely fails to clean up its temporary directory after CMD has finished. 125: CMD never ran.
headless() {
  local geometry=$1 out=$2 rc_file rc
  shift 2
  rc_file=$(mktemp)
  xvfb-run -a -s "-screen 0 $geometry" bash -c '"$@"; echo $? >"$0"' "$rc_file" "$@" >"$out" 2>&1
  rc=$(cat "$rc_file" 2>/dev/null)
  rm -f "$rc_file"
  return "${rc:-125}"
}
