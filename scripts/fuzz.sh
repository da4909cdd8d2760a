#!/usr/bin/env bash
# Builds the libFuzzer targets in tests/fuzz with clang (-fsanitize=fuzzer,address,undefined)
# into build-fuzz/ and runs each for a bounded time.
#
#   scripts/fuzz.sh [seconds per target, default 60] [target ...]
#
# Targets: fuzz_event_codec (the event-frame decoder), fuzz_store (the rendezvous store's server
# over loopback), fuzz_event_server (the controller's event server over loopback).
# Corpora grow in build-fuzz/corpus/<target>/ (seeded by the targets themselves from the real
# encoders); a crash leaves its reproducer in build-fuzz/crashes/<target>/ and the script exits 1.
# Rerun one reproducer with:  build-fuzz/tests/fuzz/<target> <file>
#
# Environment: RINGLAB_FUZZ_BUILD_DIR (default build-fuzz), JOBS (build parallelism, default 2).
set -uo pipefail
cd "$(dirname "$0")/.."
source_dir=$(pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_event_codec fuzz_store fuzz_event_server)
[[ $seconds =~ ^[0-9]+$ && $seconds -ge 1 ]] || { echo "usage: $0 [seconds>=1] [target ...]" >&2; exit 2; }
build=${RINGLAB_FUZZ_BUILD_DIR:-$source_dir/build-fuzz}
jobs=${JOBS:-2}

# clang 14 and its libFuzzer runtime, from Debian, only when missing.
need=()
command -v clang++-14 > /dev/null || need+=(clang-14)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a > /dev/null 2>&1 || need+=(libclang-rt-14-dev)
if [[ ${#need[@]} -gt 0 ]]; then
  echo "installing ${need[*]}"
  apt-get install -y --no-install-recommends "${need[@]}" || { echo "cannot install ${need[*]}" >&2; exit 1; }
fi

# Everything (the engine too) is instrumented for coverage and the sanitizers; the targets add
# libFuzzer's main at link time (tests/fuzz/CMakeLists.txt). UBSan findings abort, so the
# fuzzer sees them as crashes. No GUI, MPI or CUDA: the targets only need the engine's core.
# -mavx2 -mfma: clang refuses engine/nn/tanh.cpp's declaration of glibc's AVX2 tanhf unless AVX
# is on for the whole file (GCC accepts it); the fuzzers only run on this machine, which has both.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
grep -q avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && flags="$flags -mavx2 -mfma"
echo "=== configure $build"
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DRINGLAB_FUZZ=ON -DRINGLAB_WITH_GUI=OFF -DRINGLAB_WITH_MPI=OFF -DRINGLAB_WITH_CUDA=OFF \
  > "$build.configure.log" 2>&1 || { tail -30 "$build.configure.log"; exit 1; }
mv "$build.configure.log" "$build/fuzz-configure.log"
echo "=== build ${targets[*]}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}" > "$build/fuzz-build.log" 2>&1 ||
  { grep -E 'error|FAILED' "$build/fuzz-build.log" | head -30; exit 1; }

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/$t"
  corpus="$build/corpus/$t"
  crashes="$build/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  RINGLAB_FUZZ_WRITE_SEEDS="$corpus" "$bin"
  echo "=== $t: ${seconds} s, corpus $(ls "$corpus" | wc -l) files"
  log="$build/$t.log"
  # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: a forged length must not make
  # the code allocate without bound; -max_len: frames with room for every field and some text.
  "$bin" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$crashes/" -print_final_stats=1 > "$log" 2>&1
  rc=$?
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ +DONE' "$log" | sed 's/^/    /'
  grep -E '^#[0-9]+' "$log" | tail -1 | sed 's/^/    last: /'
  if [[ $rc -ne 0 ]] || ls "$crashes"/* > /dev/null 2>&1; then
    echo "    FOUND: exit $rc, reproducers:"
    ls "$crashes" | sed 's/^/      /'
    grep -m3 -E 'ERROR|runtime error|deadly signal|abort|uncaught' "$log" | sed 's/^/      /'
    status=1
  else
    echo "    no crash, no hang, no sanitizer report"
  fi
done
exit $status
