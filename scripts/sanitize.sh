#!/usr/bin/env bash
# Builds ringlab with a sanitizer preset and runs the whole ctest suite under it.
#
#   scripts/sanitize.sh asan|tsan|both [extra ctest arguments, e.g. -R store]
#
# asan: AddressSanitizer + UndefinedBehaviorSanitizer (the `asan` preset in CMakePresets.json).
# tsan: ThreadSanitizer (the `tsan` preset).
#
# The suite starts real worker processes (`ringlab worker`, mpirun), and a report in a child would
# only reach the controller's stderr, if at all. So every sanitized process writes its report to a
# file under <build>/sanitizer-logs/ (log_path), and the script lists every report at the end:
# a run is clean when ctest passes AND that folder holds no report.
#
# Environment:
#   RINGLAB_SANITIZE_DIR_PREFIX  build folders are <prefix>-asan, <prefix>-tsan (default: build,
#                                which is where the presets put them)
#   JOBS                         build parallelism (default 2)
#   BUILD_ATTEMPTS               tries of the build before giving up (default 1)
#   CTEST_JOBS                   tests run at once (default 1: the multi-process tests are timed)
set -uo pipefail
cd "$(dirname "$0")/.."
source_dir=$(pwd)

usage() { echo "usage: $0 asan|tsan|both [ctest arguments...]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
which=$1
shift
case "$which" in
  asan) presets=(asan) ;;
  tsan) presets=(tsan) ;;
  both) presets=(asan tsan) ;;
  *) usage ;;
esac

prefix=${RINGLAB_SANITIZE_DIR_PREFIX:-build}
jobs=${JOBS:-2}
ctest_jobs=${CTEST_JOBS:-1}

# Third-party libraries built without sanitizers leak on purpose at exit (OpenMPI's and hwloc's
# one-time allocations, PMIx's): those are not ringlab's leaks. Nothing of ringlab's is listed.
# vasprintf: OpenMPI keeps strings it formats with asprintf() during MPI_Init; libc's vasprintf
# has no frame pointer, so the fast unwinder stops there and the libmpi frame that would match
# the lines above is never seen. ringlab itself never calls asprintf.
# add_to_global_resize: glibc's dynamic loader grows its global scope when a library is
# dlopen()ed (OpenMPI's components) and keeps the array in its own state, which LeakSanitizer
# does not scan once thread-local storage is not a root (use_tls=0, below).
# (Libraries unloaded before exit are kept loaded in sanitized builds: see
# app/sanitizer_keep_libraries.cpp.)
write_lsan_suppressions() {
  cat > "$1" <<'EOF'
leak:libmpi.so
leak:libopen-pal.so
leak:libopen-rte.so
leak:libpmix.so
leak:libhwloc.so
leak:libevent
leak:mca_
leak:orte_
leak:opal_
leak:vasprintf
leak:add_to_global_resize
EOF
}

# ThreadSanitizer sees OpenMPI's own progress threads (not instrumented) as racing with
# themselves; suppress by library so a race in ringlab's code is still reported. The same for the
# components OpenMPI loads at MPI_Init (openmpi3/mca_*.so): the PMIx client's thread races with
# MPI_Init's writes inside it, and the error manager locks its own mutex twice, with no ringlab
# frame in either stack (race/mutex by path: called_from_lib takes one library per line). And
# Mesa's software GL driver (swrast_dri.so), whose own rendering threads are not instrumented.
write_tsan_suppressions() {
  cat > "$1" <<'EOF'
called_from_lib:libmpi.so
called_from_lib:libopen-pal.so
called_from_lib:libopen-rte.so
called_from_lib:libpmix.so
called_from_lib:libevent_core
called_from_lib:libevent_pthreads
called_from_lib:libhwloc.so
race:openmpi3/mca_
mutex:openmpi3/mca_
deadlock:openmpi3/mca_
called_from_lib:swrast_dri.so
race:swrast_dri.so
mutex:swrast_dri.so
EOF
}

run_preset() {
  local preset=$1
  local dir="$source_dir/$prefix-$preset"
  local logs="$dir/sanitizer-logs"
  mkdir -p "$dir"
  echo "=== $preset: configure into $dir"
  cmake --preset "$preset" -B "$dir" -S "$source_dir" > "$dir/sanitize-configure.log" 2>&1 ||
    { cat "$dir/sanitize-configure.log"; return 1; }
  grep -E '^-- ringlab:' "$dir/sanitize-configure.log" || true
  echo "=== $preset: build (-j$jobs)"
  local t0=$SECONDS attempt=1
  # BUILD_ATTEMPTS > 1 retries a failed build after a minute (a tree shared with others can be
  # briefly unbuildable while someone is half-way through an edit).
  until cmake --build "$dir" -j "$jobs" > "$dir/sanitize-build.log" 2>&1; do
    grep -E 'error|FAILED' "$dir/sanitize-build.log" | head -40
    if [[ $attempt -ge ${BUILD_ATTEMPTS:-1} ]]; then
      echo "=== $preset: BUILD FAILED (full log: $dir/sanitize-build.log)"
      return 1
    fi
    attempt=$((attempt + 1))
    echo "    build attempt $attempt in 60 s"
    sleep 60
  done
  echo "    built in $((SECONDS - t0)) s"

  rm -rf "$logs"
  mkdir -p "$logs"
  write_lsan_suppressions "$dir/lsan.supp"
  write_tsan_suppressions "$dir/tsan.supp"
  # halt_on_error with a report file: the first finding stops the process, a test fails, and the
  # report is kept. UBSan is made fatal too, so undefined behaviour cannot pass silently.
  export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:halt_on_error=1"
  # use_tls=0: at exit, LeakSanitizer's tracer reads every thread's dynamic TLS blocks, and in an
  # OpenMPI rank the one it recorded for a component OpenMPI loads is bogus ("DTLS 8 at
  # 0x22a1-0x4000033a3" with verbosity=1): the tracer dies on signal 11 and the rank exits 1 after
  # a clean run. Without TLS as a root, memory reachable only from thread-local storage is
  # reported as a leak: the check can only report more, never hide one. (ringlab's thread_local
  # buffers are gone by then: the main thread's are destroyed at exit before the check, and every
  # other thread has been joined.)
  export LSAN_OPTIONS="suppressions=$dir/lsan.supp:print_suppressions=0:use_tls=0"
  export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
  export TSAN_OPTIONS="log_path=$logs/tsan:suppressions=$dir/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
  # Timing tests (sim_calibration) skip themselves: instrumented times describe the sanitizer.
  export RINGLAB_UNDER_SANITIZER=$preset
  # OpenMPI run as root inside a container: its own variables, not a sanitizer matter.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

  echo "=== $preset: ctest"
  t0=$SECONDS
  ctest --test-dir "$dir" --output-on-failure -j "$ctest_jobs" --timeout 3600 "$@" 2>&1 | tee "$dir/sanitize-ctest.log" |
    grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|tests failed|The following|^\s+[0-9]+ - '
  local ctest_rc=${PIPESTATUS[0]}
  echo "    ctest took $((SECONDS - t0)) s, exit $ctest_rc"

  local reports
  reports=$(find "$logs" -type f -size +0 | sort)
  if [[ -n "$reports" ]]; then
    echo "=== $preset: $(echo "$reports" | wc -l) sanitizer report(s):"
    for f in $reports; do
      echo "--- $f"
      # The headline and the first frames that are not the sanitizer's own.
      grep -m1 -E 'ERROR: |WARNING: ThreadSanitizer|runtime error|SUMMARY' "$f"
      grep -E '^\s+#[0-9]+ ' "$f" | grep -v -E 'libclang_rt|libasan|libtsan|libubsan|sanitizer_common' | head -6
    done
  else
    echo "=== $preset: no sanitizer report"
  fi
  [[ $ctest_rc -eq 0 && -z "$reports" ]]
}

status=0
for p in "${presets[@]}"; do
  if run_preset "$p" "$@"; then echo "=== $p: CLEAN"; else echo "=== $p: NOT CLEAN"; status=1; fi
done
exit $status
