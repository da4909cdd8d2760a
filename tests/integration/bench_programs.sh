#!/usr/bin/env bash
# The programs and scripts the speed benches are made of, used as an engineer would, without
# timing anything (the benches themselves are not part of the suite):
#   - bench/bare_allreduce: bad arguments are refused with what was wrong; over 2 MPI and 2 gloo
#     ranks its all-reduce is checked against the serial sum and its JSON line is complete, in the
#     plain loop (a bandwidth) and in the step mode (compute first, no bandwidth);
#   - bench/blank_window: without a display it says so; on one, its window opens and SIGTERM
#     closes it cleanly;
#   - bench/step_floor.sh, allreduce_vs_bare.sh, app_window.sh: bad input and a missing program
#     stop them before anything runs, naming what was wrong.
# Called by ctest as: bash bench_programs.sh <ringlab> <source-dir>.
set -u
ringlab=$(realpath "$1")
src=$2
bench_dir=$(dirname "$ringlab")/../bench
bare=$bench_dir/bare_allreduce
blank=$bench_dir/blank_window
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }
source "$(dirname "$0")/lib/headless.bash"
[[ -x "$bare" ]] || { echo "FAIL $bare is not built"; exit 1; }

# expect_refusal DESCRIPTION TEXT COMMAND...: exit 2, and TEXT in what it printed.
expect_refusal() {
  local what=$1 text=$2 rc
  shift 2
  "$@" >"$work/out" 2>&1
  rc=$?
  if [[ $rc -eq 2 ]] && grep -qF -- "$text" "$work/out"; then ok "$what: refused ($(head -c 160 "$work/out" | head -1))"
  else fail "$what: expected exit 2 and '$text', got $rc: $(head -3 "$work/out")"; fi
}

expect_refusal "bare_allreduce, ITERS 'abc'" "'abc'" "$bare" mpi 16 abc 0
expect_refusal "bare_allreduce, BYTES '10x'" "'10x'" "$bare" mpi 10x 1 0
expect_refusal "bare_allreduce, BYTES 18 (not whole floats)" "whole number of floats" "$bare" gloo 18 1 0
expect_refusal "bare_allreduce, COMPUTE_US 0" "COMPUTE_US '0'" "$bare" mpi 16 1 0 0
expect_refusal "bare_allreduce, COMPUTE_US 1e9" "below 10 s" "$bare" mpi 16 1 0 1e9
expect_refusal "bare_allreduce, no arguments" "usage" "$bare"

# check_line DESCRIPTION MODE: rank 0's line in $work/line, MODE loop | step.
check_line() {
  if $py - "$work/line" "$2" >"$work/cmp" 2>&1 <<'EOF'
import json, sys
row = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert row["bytes"] == 40000, row
assert row["time_us"] > 0, row
if sys.argv[2] == "step":
    # Each step burns 50 us of CPU time before its all-reduce: the step cannot take less.
    assert row["compute_us"] == 50.0 and row["busbw_gbps"] is None and row["time_us"] >= 50.0, row
else:
    assert "compute_us" not in row and row["busbw_gbps"] > 0, row
print(f"time_us {row['time_us']}, busbw {row['busbw_gbps']}")
EOF
  then ok "$1: $(cat "$work/cmp")"; else fail "$1: $(tail -3 "$work/cmp") in: $(cat "$work/line")"; fi
}

mpi_env=(OMPI_MCA_plm=isolated OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  OMPI_MCA_btl_base_warn_component_unused=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
if command -v mpirun >/dev/null && "$bare" mpi 4 1 0 2>&1 | grep -qv "not in this build"; then
  for mode in loop step; do
    extra=()
    [[ $mode == step ]] && extra=(50)
    if env "${mpi_env[@]}" timeout 120 mpirun --oversubscribe -np 2 --bind-to none "$bare" mpi 40000 20 2 "${extra[@]}" \
         >"$work/line" 2>"$work/err"; then
      check_line "bare_allreduce over 2 MPI ranks, $mode" $mode
    else
      fail "bare_allreduce over 2 MPI ranks, $mode: $(tail -3 "$work/err")"
    fi
  done
else
  echo "skip bare_allreduce over MPI: not in this build"
fi

for mode in loop step; do
  extra=()
  [[ $mode == step ]] && extra=(50)
  store=$(mktemp -d -p "$work")
  RANK=1 WORLD_SIZE=2 STORE_DIR=$store timeout 120 "$bare" gloo 40000 20 2 "${extra[@]}" >/dev/null 2>"$work/err1" &
  peer=$!
  RANK=0 WORLD_SIZE=2 STORE_DIR=$store timeout 120 "$bare" gloo 40000 20 2 "${extra[@]}" >"$work/line" 2>"$work/err0"
  rc0=$?
  wait $peer
  rc1=$?
  if [[ $rc0 -eq 0 && $rc1 -eq 0 ]]; then check_line "bare_allreduce over 2 gloo ranks, $mode" $mode
  else fail "bare_allreduce over 2 gloo ranks, $mode: exits $rc0/$rc1: $(cat "$work/err0" "$work/err1" | tail -3)"; fi
done

# The blank window: only where the app is built (it shares the app's OpenGL loader).
if [[ -x "$blank" ]]; then
  env -u DISPLAY -u WAYLAND_DISPLAY "$blank" >"$work/out" 2>&1
  rc=$?
  if [[ $rc -eq 2 ]] && grep -q "no display" "$work/out"; then ok "blank_window without a display: exit 2, '$(cat "$work/out")'"
  else fail "blank_window without a display: exit $rc: $(cat "$work/out")"; fi
  # On a display: the window is there by its title, and SIGTERM ends it with exit 0 within 10 s.
  walk='
    "$1" & win=$!
    for i in $(seq 100); do xdotool search --pid $win --name "blank window" >/dev/null 2>&1 && break; sleep 0.1; done
    xdotool search --pid $win --name "blank window" >/dev/null 2>&1 || { echo "the window did not open"; kill $win; exit 3; }
    echo "opened"
    kill -TERM $win
    for i in $(seq 100); do kill -0 $win 2>/dev/null || break; sleep 0.1; done
    kill -0 $win 2>/dev/null && { echo "still running 10 s after SIGTERM"; kill -KILL $win; exit 4; }
    wait $win'
  if command -v xvfb-run >/dev/null && command -v xdotool >/dev/null; then
    headless 1280x720x24 "$work/walk" bash -c "$walk" _ "$blank"
    rc=$?
    if [[ $rc -eq 0 ]] && grep -q opened "$work/walk"; then ok "blank_window on Xvfb: opened, SIGTERM closed it (exit 0)"
    else fail "blank_window on Xvfb: exit $rc: $(tail -3 "$work/walk")"; fi
  else
    echo "skip blank_window on a display: xvfb-run or xdotool is not installed"
  fi
else
  echo "skip blank_window: not built (this build has no desktop app)"
fi

# The bench scripts refuse bad input and a missing program before running anything.
expect_refusal "step_floor.sh, world size 'x'" "world size 'x'" bash "$src/bench/step_floor.sh" "$ringlab" x
expect_refusal "step_floor.sh, 4 ranks without bare_allreduce" "is not built" \
  env BARE=/nonexistent bash "$src/bench/step_floor.sh" "$ringlab" 4
# Each rule the size breaks is named: one message for all three read as "not a multiple of 4" for 99G.
expect_refusal "allreduce_vs_bare.sh, size '3K'" "size '3K' (3072 bytes): expected 4K to 1G" bash "$src/bench/allreduce_vs_bare.sh" "$ringlab" 3K
expect_refusal "allreduce_vs_bare.sh, size '99G'" "size '99G' (106300440576 bytes): expected 4K to 1G" bash "$src/bench/allreduce_vs_bare.sh" "$ringlab" 99G
expect_refusal "allreduce_vs_bare.sh, size '4097'" "not a whole number of floats" bash "$src/bench/allreduce_vs_bare.sh" "$ringlab" 4097
for script in step_floor allreduce_vs_bare app_window; do
  if bash "$src/bench/$script.sh" --help >"$work/out" 2>&1 && grep -q "bench/$script.sh \[path/to/ringlab\]" "$work/out"; then
    ok "$script.sh --help: its header, how it is called"
  else fail "$script.sh --help: exit $?: $(head -3 "$work/out")"; fi
done
# An argument more than a script takes was passed over: "16M 32M" measured 16M alone.
expect_refusal "allreduce_vs_bare.sh, 16M 32M" "unexpected argument '32M'" bash "$src/bench/allreduce_vs_bare.sh" "$ringlab" 16M 32M
expect_refusal "app_window.sh, 4 2" "unexpected argument '2'" bash "$src/bench/app_window.sh" "$ringlab" 4 2
# Ctrl-C: ringlab catches SIGINT (its ranks stop together) and exits 130 of its own accord, so
# bash, which stops only for a child that died by the signal, went on: step_floor.sh took the
# interrupted run that asks whether the build has a backend for a "no", said "not in this build",
# and printed a table without those rows, exit 0. A stand-in for ringlab that trains as a quick
# one would (its report's step time) and, asked for a run of no epochs, interrupts its own process
# group as a Ctrl-C does and exits 130 as ringlab does: the bench must stop there, exit 130.
cat >"$work/interrupting" <<'STUB'
#!/usr/bin/env bash
args=" $* "
if [[ $args == *" --epochs 0 "* ]]; then
  trap 'exit 130' INT
  kill -INT 0
  sleep 5 & wait
fi
while [[ $# -gt 0 && $1 != --report ]]; do shift; done
echo '{"us_per_step": 20.0}' >"$2"
STUB
chmod +x "$work/interrupting"
setsid bash "$src/bench/step_floor.sh" "$work/interrupting" 1 >"$work/out" 2>&1
rc=$?
if [[ $rc -eq 130 ]] && grep -q "interrupted (Ctrl-C)" "$work/out" && ! grep -q "not in this build\|^ranks" "$work/out"; then
  ok "step_floor.sh, Ctrl-C during a run: stopped, exit 130, no table"
else fail "step_floor.sh, Ctrl-C during a run: exit $rc: $(tail -3 "$work/out")"; fi
expect_refusal "allreduce_vs_bare.sh without bare_allreduce" "is not built" \
  env BARE=/nonexistent bash "$src/bench/allreduce_vs_bare.sh" "$ringlab" 4K
expect_refusal "app_window.sh, REPEAT=0" "REPEAT='0'" env REPEAT=0 bash "$src/bench/app_window.sh" "$ringlab" 4
expect_refusal "app_window.sh, EPOCHS=many" "EPOCHS='many'" env EPOCHS=many bash "$src/bench/app_window.sh" "$ringlab" 4
expect_refusal "app_window.sh, APP_SCHED=fifo" "APP_SCHED='fifo': expected idle, batch or nice19" env APP_SCHED=fifo bash "$src/bench/app_window.sh" "$ringlab" 4
if command -v Xvfb >/dev/null && command -v xdotool >/dev/null; then
  expect_refusal "app_window.sh without blank_window" "is not built" \
    env BLANK=/nonexistent bash "$src/bench/app_window.sh" "$ringlab" 4
  # A blank window that never opens (a program that exits at once): the bench stops, naming it,
  # and takes its display server down with it (it used to leave Xvfb running after every run).
  servers() { pgrep -f "Xvfb :[0-9]+ -screen 0 1920x1080x24 -nolisten tcp -noreset" | sort; }
  before=$(servers)
  expect_refusal "app_window.sh, a blank window that does not open" "the blank window did not open" \
    env BLANK=/bin/false REPEAT=1 timeout 120 bash "$src/bench/app_window.sh" "$ringlab" 4
  # One short round through to the verdict, as an engineer would run it: the window's run must have
  # ended before the window was closed (the bench checks its phase), each of the three runs reports a
  # step time, and the two paired lines the verdict reads are printed. Nothing is timed.
  env REPEAT=1 EPOCHS=2 timeout 300 bash "$src/bench/app_window.sh" "$ringlab" 2 >"$work/round" 2>&1
  rc=$?
  steps=$(grep -cE '^(without a window|beside a blank window|beside the app.s window) .* [1-9][0-9]*\.[0-9] ' "$work/round")
  if [[ $rc -eq 0 && $steps -eq 3 ]] && grep -q "^app's window / blank window, paired" "$work/round" &&
    grep -q "^# verdict: " "$work/round"; then ok "app_window.sh, one round at 2 ranks: $(grep '^# verdict' "$work/round")"
  else fail "app_window.sh, one round at 2 ranks: exit $rc, $steps step times: $(tail -5 "$work/round")"; fi
  left=$(comm -13 <(echo "$before") <(servers))
  if [[ -z $left ]]; then ok "app_window.sh left no display server behind"
  else fail "app_window.sh left its display server running: pid $left"; kill $left 2>/dev/null; fi
fi

[[ $failures -eq 0 ]] || { echo "$failures failure(s)"; exit 1; }
echo "all passed"
