#!/usr/bin/env bash
# Does the app's drawing slow the workers? The seed's job (4096 samples, batch 32) at
# WORLD ranks on gloo (default 4), µs per step without a window (`ringlab run`) and with one
# (`ringlab gui` in a real window on an Xvfb display, started with F5 as a person would), and
# beside the floor under any window (bench/blank_window: the same maximized OpenGL window at the
# app's frame cap, which only clears itself and swaps), in turns, REPEAT times each (default 7),
# medians and their ratios, and the paired ratios (each round's run beside a window against its
# run without one) that the verdict reads. The goal: the window does not slow the workers (paired,
# within 5%); where a blank window already does (every frame filled and copied on the CPU), the
# app's window counts as floor-bound when its paired ratio is at most 1.3x the blank window's.
# "Already does" means: its paired ratio is above 1.05x, and it was slower than the run without a
# window in so many rounds that a window costing nothing would be so in at most 2% of series (a sign
# test: 6 of 6 rounds, 7 of 7, 8 of 9, 12 of 15, 16 of 21). A single run here spreads ±15%, so that
# a window costing 10% can come out faster than the run beside it now and then; with three rounds
# the blank window's median alone came out 0.98-1.45x of the step without one.
#
#   bench/app_window.sh [path/to/ringlab] [world size]
#
# APP_SCHED=idle, batch or nice19 puts every thread of the app (its drawing, llvmpipe's
# rasterizer threads, its intake of the run's events) under SCHED_IDLE, under SCHED_BATCH (a
# waking thread does not preempt a running one) or at nice 19 once its workers have started:
# what the window costs when it only takes time the workers leave, or never cuts in on them.
#
# APP_SCHED_ONLY (a regular expression, with APP_SCHED) lowers only the app's threads whose names
# match it, as /proc/PID/task/TID/comm shows them: 'events r' the readers of the ranks' events,
# 'store conn' the store's connections, 'llvmpipe' Mesa's rasterizers, 'ringlab' the main thread.
#
# APP_CPUS (a CPU list as taskset reads it, e.g. 1) pins every thread of the app to those CPUs
# once its ranks have started; its ranks stay free to run on any: does it matter which cores the
# drawing shares, beyond how much of them it takes?
#
# EPOCHS (default 100: 3,200 steps, one to two seconds) sets the run's length. The seed's own 5
# epochs (160 steps, about 80 ms) fall within the frames drawn for the F5 press that starts the
# run; at 100 the window's steady state is what is measured.
#
# Needs Xvfb and xdotool (scripts/setup.sh installs both). The window draws what a class sees
# (the Ring view in the big pane), at the app's own frame cap (60 a second).
set -euo pipefail
: "${REPEAT:=7}"
source "$(dirname "$0")/bench_lib.bash"
require_args_at_most 1 "bench/app_window.sh [path/to/ringlab] [world size]"
world=${bench_args[0]:-4}
epochs=${EPOCHS:-100}
[[ "$epochs" =~ ^[1-9][0-9]{0,5}$ ]] || bench_fail "EPOCHS='$epochs': expected a whole number of epochs, 1 to 999999"
require_world_sizes "$world"
app_sched=${APP_SCHED:-}
app_cpus=${APP_CPUS:-}
[[ -z $app_cpus || $app_cpus =~ ^[0-9]+([,-][0-9]+)*$ ]] || bench_fail "APP_CPUS='$app_cpus': expected a CPU list such as 1 or 0-1"
app_sched_only=${APP_SCHED_ONLY:-}
[[ -z $app_sched_only || -n $app_sched ]] || bench_fail "APP_SCHED_ONLY='$app_sched_only' needs APP_SCHED"
[[ -z $app_sched || $app_sched == idle || $app_sched == nice19 || $app_sched == batch ]] || bench_fail "APP_SCHED='$app_sched': expected idle, batch or nice19"
for tool in Xvfb xdotool; do
  command -v $tool >/dev/null || { echo "app_window.sh: $tool is not installed (scripts/setup.sh)" >&2; exit 2; }
done
blank=${BLANK:-$(dirname "$ringlab")/../bench/blank_window}
[[ -x "$blank" ]] || bench_fail "$blank is not built (cmake --build build --target blank_window)"

scenario=$work/seed.json
cat >"$scenario" <<EOF
{"title": {"en": "seed job", "id": "seed job"}, "description": {"en": "bench", "id": "bench"},
 "job": {"world_size": $world, "backend": "gloo", "algorithm": "ring", "epochs": $epochs, "samples": 4096, "batch_size": 32},
 "view": {"focus": "ring"}}
EOF

# A display number no server holds (its lock file is absent), so that the windows below open on
# this script's own Xvfb and not on another one's.
display=""
for n in $(shuf -i 90-189); do
  [[ -e /tmp/.X$n-lock || -e /tmp/.X11-unix/X$n ]] || { display=:$n; break; }
done
[[ -n $display ]] || bench_fail "no free display number between :90 and :189"
# -noreset: the server stays up between the windows (it would reset when the last one closed).
Xvfb "$display" -screen 0 1920x1080x24 -nolisten tcp -noreset >"$work/xvfb.log" 2>&1 &
xvfb=$!
# The windows (and the app's workers) are stopped with the display, whatever ends the script.
child=""
trap '[[ -n $child ]] && { kill -TERM $child 2>/dev/null || true; sleep 0.5; }; kill $xvfb 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do DISPLAY=$display xdotool getdisplaygeometry >/dev/null 2>&1 && break; sleep 0.1; done
kill -0 $xvfb 2>/dev/null && DISPLAY=$display xdotool getdisplaygeometry >/dev/null 2>&1 ||
  bench_fail "Xvfb did not start on $display: $(tail -2 "$work/xvfb.log")"

without_window() {
  "$ringlab" run -q --scenario "$scenario" --report "$work/r.json"
  us "$work/r.json"
}
# The same run as without_window, beside a blank window on the same display.
beside_blank_window() {
  DISPLAY=$display "$blank" >/dev/null 2>"$work/blank.err" &
  child=$!
  local i opened=0
  for i in $(seq 100); do
    DISPLAY=$display xdotool search --pid $child --name "blank window" >/dev/null 2>&1 && { opened=1; break; }
    sleep 0.1
  done
  [[ $opened -eq 1 ]] || bench_fail "the blank window did not open: $(tail -2 "$work/blank.err")"
  sleep 1
  without_window
  kill -TERM $child
  wait $child || true
  child=""
}
# all_ranks_started GUI: waits (10 s at most) until the app has all $world ranks as children.
all_ranks_started() {
  local i
  for i in $(seq 200); do [[ $(pgrep -c -P $1) -ge $world ]] && return 0; sleep 0.05; done
  return 1
}
# APP_SCHED: the app's own threads, not its workers. The app starts its ranks one after another
# from a thread of its own, and a process started from a lowered thread inherits its policy and
# nice value: so the threads are lowered only once every rank is there, and the ranks are then
# checked to be as they were. A thread that has ended in between is passed over.
lower_app_threads() {
  local gui=$1 task tid i
  all_ranks_started $gui || bench_fail "APP_SCHED: the app's $world ranks did not all start within 10 s"
  # A rank's event reader takes its name once the rank has said hello.
  if [[ $app_sched_only == *events* ]]; then
    for i in $(seq 200); do [[ $(cat /proc/$gui/task/*/comm 2>/dev/null | grep -c '^events r') -ge $world ]] && break; sleep 0.05; done
  fi
  local lowered=0
  for task in /proc/$gui/task/*; do
    tid=${task##*/}
    [[ -d $task ]] || continue
    [[ -z $app_sched_only ]] || grep -Eq -- "$app_sched_only" "$task/comm" 2>/dev/null || continue
    lowered=$((lowered + 1))
    if [[ $app_sched == idle ]]; then chrt --idle -p 0 "$tid" 2>/dev/null; elif [[ $app_sched == batch ]]; then chrt --batch -p 0 "$tid" 2>/dev/null; else renice -n 19 -p "$tid" >/dev/null 2>&1; fi ||
      [[ ! -d $task ]] || bench_fail "could not lower thread $tid of the app ($app_sched)"
  done
  [[ $lowered -gt 0 ]] || bench_fail "APP_SCHED_ONLY='$app_sched_only' named none of the app's threads ($(cat /proc/$gui/task/*/comm 2>/dev/null | sort | uniq -c | paste -sd' '))"
  for tid in $(pgrep -P $gui); do
    [[ $(chrt -p "$tid" 2>/dev/null) != *SCHED_IDLE* && $(chrt -p "$tid" 2>/dev/null) != *SCHED_BATCH* && $(ps -o ni= -p "$tid" 2>/dev/null | tr -d ' ') != 19 ]] ||
      bench_fail "APP_SCHED: rank process $tid was lowered with the app; its step would not be the workers' own"
  done
}
# APP_CPUS: the app's threads pinned, once every rank has started (a rank started from a pinned
# thread would inherit the pin), and the ranks checked to be free.
pin_app_threads() {
  local gui=$1 tid i
  all_ranks_started $gui || bench_fail "APP_CPUS: the app's $world ranks did not all start within 10 s"
  taskset -a -p -c "$app_cpus" $gui >/dev/null || bench_fail "could not pin the app's threads to CPUs $app_cpus"
  local all
  all=$(taskset -p 1 | awk '{print $NF}')
  for tid in $(pgrep -P $gui); do
    [[ $(taskset -p "$tid" | awk '{print $NF}') == "$all" ]] || bench_fail "APP_CPUS: rank process $tid was pinned with the app"
  done
}
# While the ranks run, the script must take no more of the cores than it does beside the blank
# window (where it only waits for `ringlab run`): a pgrep and a sleep every 0.1 s, each a fork and
# pgrep a scan of /proc, took about 0.19 s of CPU over a 1.7 s run, time the ranks would have had.
# So the ranks are looked up once, all of them started (before their first step: they meet
# first), and then watched with builtins only, a nap being a read that times out on a pipe
# nothing writes to.
wait_for_ranks_to_end() {
  local gui=$1 i ranks=() nap p
  all_ranks_started $gui || true  # those that did are watched
  mapfile -t ranks < <(pgrep -P $gui)
  [[ ${#ranks[@]} -gt 0 ]] || return 0
  exec {nap}<> <(:)
  for ((i = 0; i < 480; i++)); do
    for p in "${ranks[@]}"; do kill -0 "$p" 2>/dev/null && break; done || break
    read -r -t 0.25 -u $nap _ || true
  done
  exec {nap}<&-
}
# The window opens idle; F5 starts the run; once its workers have come and gone, SIGTERM closes
# the window, which writes what the views showed, the step time among it.
with_window() {
  rm -f "$work/s.json"  # the round before's: a window that writes none must not report its step
  DISPLAY=$display "$ringlab" gui --scenario "$scenario" --state-json "$work/s.json" >/dev/null 2>&1 &
  local gui=$! win="" i
  child=$gui
  for i in $(seq 100); do
    win=$(DISPLAY=$display xdotool search --pid $gui --name ringlab 2>/dev/null | head -1) && [[ -n $win ]] && break
    sleep 0.1
  done
  [[ -n $win ]] || { echo "app_window.sh: the window did not open" >&2; kill $gui 2>/dev/null; exit 1; }
  sleep 1
  DISPLAY=$display xdotool key --window "$win" F5
  for i in $(seq 100); do pgrep -P $gui >/dev/null && break; sleep 0.05; done
  [[ -n $app_sched ]] && lower_app_threads $gui
  [[ -n $app_cpus ]] && pin_app_threads $gui
  wait_for_ranks_to_end $gui
  sleep 0.5
  kill -TERM $gui
  wait $gui || true
  child=""
  # A window closed before its run ended would report the step time of part of the run.
  local phase
  [[ -s "$work/s.json" ]] || bench_fail "the app's window ended without writing what it showed ($work/s.json): did it crash, or was it killed?"
  phase=$(field "$work/s.json" run_phase)
  [[ $phase == finished ]] || bench_fail "the app's run had not finished when its window was closed (its phase: $phase)"
  field "$work/s.json" us_per_step
}

lowered=""
[[ -n $app_sched ]] && lowered="; the app's threads${app_sched_only:+ named /$app_sched_only/} at $app_sched once its ranks have started"
[[ -n $app_cpus ]] && lowered+="; the app's threads pinned to CPUs $app_cpus once its ranks have started"
echo "# bench/app_window.sh $(basename "$ringlab") $world: median of $repeat runs each; $(nproc) cores$lowered"
load_before
: >"$work/a.txt"
: >"$work/b.txt"
: >"$work/c.txt"
for _ in $(seq "$repeat"); do
  without_window >>"$work/a.txt"
  beside_blank_window >>"$work/c.txt"
  with_window >>"$work/b.txt"
done
a=$(median <"$work/a.txt")
b=$(median <"$work/b.txt")
c=$(median <"$work/c.txt")
# A run that reported no step time (the window never started it, or closed before it ended) is
# no measurement: say so rather than divide by it.
for pair in "without a window:a" "beside a blank window:c" "beside the app's window:b"; do
  awk '!($1 > 0) {bad = 1} END {exit bad}' "$work/${pair##*:}.txt" ||
    bench_fail "a run ${pair%%:*} reported no step time ($(paste -sd' ' "$work/${pair##*:}.txt")): nothing to compare; is the machine too busy for the window to start its run?"
done
printf "%-38s %13s\n" "$world ranks, gloo, seed job" "µs per step"
runs() { awk '{printf "%s%.1f", (NR > 1 ? " " : ""), $1}' "$1"; }
printf "%-38s %12.1f   (runs: %s)\n" "without a window (ringlab run)" "$a" "$(runs "$work/a.txt")"
printf "%-38s %12.1f   (runs: %s)\n" "beside a blank window (the floor)" "$c" "$(runs "$work/c.txt")"
printf "%-38s %12.1f   (runs: %s)\n" "beside the app's window" "$b" "$(runs "$work/b.txt")"
ratio() { awk -v x="$1" -v y="$2" 'BEGIN {printf "%.2f", x / y}'; }
printf "%-38s %11sx\n" "blank window / without" "$(ratio "$c" "$a")"
printf "%-38s %11sx\n" "app's window / without" "$(ratio "$b" "$a")"
printf "%-38s %11sx\n" "app's window / blank window" "$(ratio "$b" "$c")"
# Each round's ratio (its run beside a window against its run without one, seconds apart), and
# the median of those: slow drifts of the machine's speed cancel in it, which they do not in a
# ratio of two medians.
paired() { paste "$work/a.txt" "$work/$1.txt" | awk '{print $2 / $1}' | median | awk '{printf "%.2f", $1}'; }
printf "%-38s %11sx   (median of each round's ratio; blank window %sx)\n" "app's window / without, paired" "$(paired b)" "$(paired c)"
# Rounds in which the blank window was slower than the run without a window of the same round, and
# the chance that a window that costs nothing would be slower in as many (each round a coin's toss).
blank_slower=$(paste "$work/a.txt" "$work/c.txt" | awk '$2 > $1 {n++} END {print n + 0}')
chance=$(awk -v n="$repeat" -v k="$blank_slower" 'BEGIN {
  c = 1; t = 0
  for (i = 0; i <= n; i++) { if (i >= k) t += c; c = c * (n - i) / (i + 1) }
  printf "%.3f", t / 2 ^ n }')
echo "# the blank window was slower than the run without one in $blank_slower of $repeat rounds (by chance alone: $([[ $chance == 0.000 ]] && echo "below 0.001" || echo "$chance"))"
# What the app's drawing adds to what any window costs: each round's run beside the app's window
# against its run beside the blank one.
app_slower=$(paste "$work/c.txt" "$work/b.txt" | awk '$2 > $1 {n++} END {print n + 0}')
printf "%-38s %11sx   (median of each round's ratio; the app's window slower in %s of %s rounds)\n" "app's window / blank window, paired" \
  "$(paste "$work/c.txt" "$work/b.txt" | awk '{print $2 / $1}' | median | awk '{printf "%.2f", $1}')" "$app_slower" "$repeat"
# A machine whose neighbours take its cores for seconds at a time makes the runs without a window
# slow too, and a ratio of medians then says "met" for nothing: rounds whose run without a window
# took 1.5x the fastest of them or more are counted, and with more than a third of them the
# measurement gives no verdict.
disturbed=$(awk 'NR == 1 || $1 < min {min = $1} {v[NR] = $1} END {for (i in v) if (v[i] >= 1.5 * min) n++; print n + 0}' "$work/a.txt")
echo "# rounds whose run without a window took 1.5x the fastest one or more: $disturbed of $repeat"
# The verdict reads the paired ratios: a ratio of two medians said "met" (1.02x) for a series whose
# rounds put the app's window at 1.11x, the machine's speed having drifted between its columns.
verdict=$(awk -v pb="$(paired b)" -v pc="$(paired c)" -v chance="$chance" -v rounds="$repeat" -v disturbed="$disturbed" 'BEGIN {
  if (disturbed * 3 > rounds) print "none: the machine was disturbed during the runs without a window; run it again on a quiet machine"
  else if (pb <= 1.05) print "met: the window does not slow the workers (within 5%, paired)"
  else if (pc > 1.05 && chance <= 0.02 && pb <= 1.3 * pc)
    print "floor-bound: a blank window already slows them, and the app takes at most 1.3x its step"
  else print "NOT MET" }')
echo "# goal: the app's window does not slow the workers, its paired ratio at most 1.05x (met); floor-bound: a"
echo "#   blank window already slows them (paired above 1.05x, and slower in so many rounds that chance alone is"
echo "#   below 0.02) and the app's paired ratio is at most 1.3x the blank window's; otherwise NOT MET"
echo "# verdict: $verdict"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
