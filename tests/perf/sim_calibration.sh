#!/bin/bash
# The cost models against this machine. For gloo and MPI at 2 and 4 ranks: sweep the all-reduce
# (`ringlab bench allreduce`), fit a link to every other size and predict the sizes in between,
# and predict the DDP step time of real training runs (`ringlab run`) from their own measured
# compute and that link. Every judged prediction must be within 25% of the measurement. The
# comparison itself is `ringlab simulate --validate`, the code the README's table comes from.
#
# Noise. Each configuration is measured REPEATS times, a bench sweep and then a training run, so
# both see the same load; each repeat is itself a median (over iterations, over steps). simulate
# judges the median of the repeats, and calls a row "noisy" (printed as SKIP, not judged) when
# fewer than two thirds of the repeats lie within the tolerance of their median. A DDP step is
# predicted from the link the bench measured, so it is not judged when the machine was busy
# during one and quiet during the other (CPU pressure, /proc/pressure/cpu).
# Time-sharing. With more ranks than cores, a rank that waits for a message often waits for the
# sender's next time slice: the times are the scheduler's, not the link's. Such configurations
# are measured and printed, and their rows are SKIPs, not passes.
#
# Usage: sim_calibration.sh <ringlab binary> <source dir>
# Environment: SIM_CALIBRATION_REPEATS (default 5); SIM_CALIBRATION_TABLE=FILE also writes the
# Markdown table (the README's) to FILE; SIM_CALIBRATION_KEEP=DIR keeps every bench file, report
# and trace there.
# Exit: 0 when every judged row is within 25%, 1 when one is not or a command fails, 77 when
# nothing could be judged (no backend here, or every row skipped).
set -u
ringlab="$1"
source_dir="$2"
# Under a sanitizer (scripts/sanitize.sh) compute and copies run several times slower than the
# messages: the times describe the instrumentation, not this machine's link.
if [[ -n "${RINGLAB_UNDER_SANITIZER:-}" ]]; then
  echo "SKIP: timings under $RINGLAB_UNDER_SANITIZER say nothing about the machine's link"
  exit 77
fi
repeats="${SIM_CALIBRATION_REPEATS:-5}"
tolerance=0.25
work="$(mktemp -d)"
keep="${SIM_CALIBRATION_KEEP:-}"
trap '[ -n "$keep" ] && mkdir -p "$keep" && cp -r "$work"/. "$keep"/; rm -rf "$work"' EXIT

cores="$(nproc)"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
passed=0 failed=0 skipped=0 xfailed=0
fail_lines="" skip_lines=""

# A backend is measured only where it can run: the same probe as the other bench tests.
usable() {
  local probe
  probe="$("$ringlab" bench allreduce --backend "$1" --world-size 1 -b 4 -e 4 -n 1 -w 0 2>&1)"
  if grep -q "cannot run here\|needs mpirun" <<<"$probe"; then
    echo "SKIP: backend $1 cannot run here: $(grep -m1 -o "cannot run here.*\|needs mpirun.*" <<<"$probe")"
    return 1
  fi
}

# CPU pressure: the share of wall time some runnable task waited for a core (Linux PSI,
# /proc/pressure/cpu, "some" total in microseconds). Empty where the kernel does not report it.
cpu_stall_us() { [ -r /proc/pressure/cpu ] && awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/cpu; }
now_us() { echo $(($(date +%s%N) / 1000)); }
# timed PHASE COMMAND...: runs the command, adding its wall time and CPU stall to PHASE's totals.
declare -A wall_us stall_us
timed() {
  local phase="$1" s0 t0 rc
  shift
  s0="$(cpu_stall_us)"
  t0="$(now_us)"
  "$@"
  rc=$?
  wall_us[$phase]=$((${wall_us[$phase]:-0} + $(now_us) - t0))
  [ -n "$s0" ] && stall_us[$phase]=$((${stall_us[$phase]:-0} + $(cpu_stall_us) - s0))
  return $rc
}
pressure() { [ -n "${stall_us[$1]:-}" ] && echo $((100 * ${stall_us[$1]} / ${wall_us[$1]})); }

# measure BACKEND RANKS: REPEATS bench sweeps and training runs, into $work/BACKEND-RANKS-*.
measure() {
  local backend="$1" ranks="$2" i out="$work/$1-$2"
  for i in $(seq 1 "$repeats"); do
    # 16 B .. 1 MiB, factor 4: 9 sizes, 5 fitted and 4 predicted, each between two fitted ones.
    # Below 4 B per rank some of the ring's chunks are empty and it sends fewer messages than its
    # formula counts; above about 1 MiB the cost per byte on this machine rises (README).
    timed "bench-$backend-$ranks" "$ringlab" bench allreduce --backend "$backend" --world-size "$ranks" \
      --algorithm both -b 16 -e 1M -f 4 -n 10 -w 20 --timeout 60 --json "$out-bench-$i.json" >"$out-bench-$i.txt" 2>&1 ||
      { cat "$out-bench-$i.txt"; echo "FAIL: bench $backend $ranks ranks"; return 1; }
    # --no-collective-check: ringlab's check sends one more small message per bucket (about one
    # alpha: ~0.1 ms on loopback gloo) that PyTorch's DDP, and so the model, does not send.
    timed "run-$backend-$ranks" "$ringlab" run -n "$ranks" --backend "$backend" --samples 4096 --epochs 1 \
      --no-collective-check --trace-level steps --timeout 60 -q --report "$out-report-$i.json" --trace "$out-trace-$i.json" \
      >"$out-run-$i.txt" 2>&1 ||
      { cat "$out-run-$i.txt"; echo "FAIL: run $backend $ranks ranks"; return 1; }
  done
}

# Known limits of the model, measured and explained in the README: a row listed here that misses
# is an XFAIL, printed and counted apart, never a pass; one that agrees is an XPASS. Keys are
# backend/algorithm/size as simulate prints them. Between 256 B and 64 KiB, OpenMPI's shared-
# memory transport changes how it moves a message: up to its eager limit it copies it into and
# out of a shared buffer, above that it adds a handshake (and, where ringlab's launcher chose the
# single copy, one kernel-assisted copy; its eager limit is then 32 KiB, docs/launchers.md, else
# OpenMPI's 4 KiB). Latency and cost per byte
# differ on the two sides, and there the measured times lie 20-60% above any one line a + b n
# through the fitted sizes 256 B, 4 KiB and 64 KiB, by an amount that changes with the load.
known_limits=("mpi/ring/1 KiB" "mpi/ring/16 KiB" "mpi/native/1 KiB" "mpi/native/16 KiB")
known_limit() {
  local key="$1/$2/$3" k
  for k in "${known_limits[@]}"; do [ "$k" = "$key" ] && return 0; done
  return 1
}

# contention PERCENT: "busy" when some task waited for a core half of the time or more. The
# machine flips between the two: quiet, a small gloo all-reduce takes ~0.1 ms; busy, every
# wake-up waits for a time slice and it takes 4-8 ms.
contention() { [ "$1" -ge 50 ] && echo busy || echo quiet; }

# judge BACKEND RANKS ALGORITHM QUANTITY SIZE VERDICT: the test's word on one row of simulate's
# table: "pass", "FAIL", "XFAIL: why", "XPASS", or "SKIP: why" for what this machine could not
# measure fairly.
judge() {
  local backend="$1" ranks="$2" algorithm="$3" quantity="$4" size="$5" verdict="$6" pb pr
  pb="$(pressure "bench-$backend-$ranks")"
  pr="$(pressure "run-$backend-$ranks")"
  case "$verdict" in
    fitted | shown) echo ""; return ;;
    noisy) echo "SKIP: noisy"; return ;;
  esac
  if [ "$ranks" -gt "$cores" ]; then
    echo "SKIP: $ranks ranks time-share $cores cores"
  elif [ "$quantity" = "DDP step" ] && [ -n "$pb" ] && [ -n "$pr" ] && [ "$(contention "$pb")" != "$(contention "$pr")" ]; then
    # The step is predicted from the link the bench measured: a link measured on the other
    # kind of machine.
    echo "SKIP: $(contention "$pb") during the bench (CPU pressure ${pb}%), $(contention "$pr") during the runs (${pr}%)"
  elif [ "$quantity" = "all-reduce" ] && known_limit "$backend" "$algorithm" "$size"; then
    [ "$verdict" = within ] && echo "XPASS" || echo "XFAIL: MPI's protocol change (known limit)"
  elif [ "$verdict" = within ]; then
    echo "pass"
  else
    echo "FAIL"
  fi
}

# compare BACKEND RANKS: simulate's comparison, each row judged; the rows, with the test's
# word in a last column, go to $work/BACKEND-RANKS-table.md.
compare() {
  local backend="$1" ranks="$2" out="$work/$1-$2" args=() i
  for i in $(seq 1 "$repeats"); do
    args+=(--validate "$out-bench-$i.json" --compare-report "$out-report-$i.json" --trace "$out-trace-$i.json")
  done
  "$ringlab" simulate "${args[@]}" --tolerance "$tolerance"
  local rc=$?
  [ "$rc" -le 1 ] || { echo "FAIL: simulate --validate exited with $rc"; return 1; }
  "$ringlab" simulate "${args[@]}" --tolerance "$tolerance" --markdown >"$out-simulate.md"
  [ -n "$(pressure "bench-$backend-$ranks")" ] &&
    echo "CPU pressure: $(pressure "bench-$backend-$ranks")% during the bench sweeps, $(pressure "run-$backend-$ranks")% during the runs"
  : >"$out-table.md"
  # Rows: | backend | ranks | algorithm | quantity | size | predicted | measured | ratio | agree | verdict |
  local line b p algo quantity size predicted measured ratio agree verdict word what
  while IFS= read -r line; do
    IFS='|' read -r _ b p algo quantity size predicted measured ratio agree verdict _ <<<"$line"
    verdict="$(echo $verdict)"
    quantity="$(echo $quantity)"
    word="$(judge "$backend" "$ranks" "$(echo $algo)" "$quantity" "$(echo $size)" "$verdict")"
    echo "$line $word |" >>"$out-table.md"
    what="$backend $ranks ranks, $(echo $algo) $quantity $(echo $size): predicted $(echo $predicted),"
    what+=" measured $(echo $measured), ratio $(echo $ratio), repeats agreeing $(echo $agree)"
    case "$word" in
      pass) passed=$((passed + 1)) ;;
      FAIL) failed=$((failed + 1)); fail_lines+="FAIL: $what: beyond 25%"$'\n' ;;
      SKIP*) skipped=$((skipped + 1)); skip_lines+="SKIP: $what (${word#SKIP: })"$'\n' ;;
      XFAIL*) xfailed=$((xfailed + 1)); skip_lines+="XFAIL: $what (${word#XFAIL: })"$'\n' ;;
      XPASS) skip_lines+="XPASS: $what (a known limit agreed this time)"$'\n' ;;
    esac
  done < <(tail -n +3 "$out-simulate.md")
}

tables=()
pressures=""
for backend in gloo mpi; do
  usable "$backend" || continue
  for ranks in 2 4; do
    echo "== $backend, $ranks ranks, $repeats repeats =="
    measure "$backend" "$ranks" || exit 1
    compare "$backend" "$ranks" || exit 1
    tables+=("$work/$backend-$ranks-table.md")
    [ -n "$(pressure "bench-$backend-$ranks")" ] &&
      pressures+="${pressures:+; }$backend $ranks ranks $(pressure "bench-$backend-$ranks")%/$(pressure "run-$backend-$ranks")%"
    echo
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

if [ -n "${SIM_CALIBRATION_TABLE:-}" ] && [ "${#tables[@]}" -gt 0 ]; then
  {
    echo "Measured $(date -u +%Y-%m-%d) at commit $(git -C "$source_dir" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
      "$cores cores, load average $load_before before and $load_after after; $repeats repeats." \
      "${pressures:+CPU pressure (bench sweeps/runs): $pressures.}"
    echo
    echo "| backend | ranks | all-reduce | quantity | size | predicted | measured | ratio | agree | verdict | test |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    cat "${tables[@]}"
  } >"$SIM_CALIBRATION_TABLE"
fi

printf "%s%s" "$skip_lines" "$fail_lines"
echo "load average: $load_before before, $load_after after ($cores cores)"
echo "$passed within 25%, $failed beyond, $xfailed known limits missed (XFAIL), $skipped skipped (not judged)"
[ "$failed" -eq 0 ] || exit 1
[ "$passed" -gt 0 ] || { echo "SKIP: no prediction could be judged"; exit 77; }
echo "PASS"
