# Shared by the bench/*.sh scripts: where things are, the seed's job, and the median.
# Sets here, ringlab (first argument, else build/app/ringlab), repeat, py, job and a work
# directory removed on exit; leaves the remaining arguments in bench_args.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_name=$(basename "$0")
bench_fail() { echo "$bench_name: $*" >&2; exit 2; }
# -h or --help: the script's own header, what it measures and how it is called.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"
  exit 0
fi
ringlab=${1:-$here/build/app/ringlab}
[[ -f "$ringlab" && -x "$ringlab" ]] ||
  bench_fail "the first argument is the ringlab binary (e.g. build/app/ringlab), and '$ringlab' is not an executable file"
shift || true
bench_args=("$@")
repeat=${REPEAT:-3}
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || bench_fail "REPEAT='$repeat': expected a whole number of runs, at least 1"
# require_world_sizes SIZE...: each a whole number of ranks from 1 to 64.
require_world_sizes() {
  local n
  for n in "$@"; do
    [[ "$n" =~ ^[1-9][0-9]*$ && "$n" -le 64 ]] || bench_fail "world size '$n': expected a whole number of ranks from 1 to 64"
  done
}
# require_args_at_most N USAGE: the arguments after the binary are at most N (one left over was
# passed over without a word: "16M 32M" measured 16M alone).
require_args_at_most() {
  [[ ${#bench_args[@]} -le $1 ]] ||
    bench_fail "unexpected argument '${bench_args[$1]}': usage: $2"
}
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Ctrl-C (or a kill) stops the bench with no figures. ringlab catches SIGINT to stop its ranks
# together, and exits 130 on its own; bash goes on after a child that exited rather than died by
# the signal, so without these the bench took an interrupted run for a backend this build lacks
# and printed a table without its rows, exit 0.
trap 'echo "$bench_name: interrupted (Ctrl-C): stopped, nothing measured is printed" >&2; exit 130' INT
trap 'echo "$bench_name: terminated: stopped, nothing measured is printed" >&2; exit 143' TERM
# The seed's job (docs/reference-measurements.md): 4096 samples, batch 32 per rank, 5 epochs.
job=(--samples 4096 --batch-size 32 --epochs 5)

# The load average, and a warning when other work already filled the cores before the bench
# began: every figure below is then a share of a busy machine, and the ratios swing either way.
load_before() {
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  awk -v l="$load" -v n="$(nproc)" 'BEGIN {exit !(l > n)}' &&
    echo "# WARNING: the machine was busy before this bench began (load $load on $(nproc) cores): other work shares" \
      "the cores, and the ratios below can swing either way; run it again on a quiet machine"
  return 0
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# field FILE KEY: one top-level field of a JSON file.
field() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
us() { field "$1" us_per_step; }

# bench/bare_allreduce, the libraries' own all-reduce with nothing of ringlab in between: where it
# is (BARE, else beside the ringlab binary's build) and how its runs are started. Each run prints
# rank 0's JSON line; bare_run_mpi and bare_run_gloo print one field of it, and stop the bench
# with the program's own words when a rank fails.
bare=${BARE:-$(dirname "$ringlab")/../bench/bare_allreduce}
require_bare() {
  [[ -x "$bare" ]] || bench_fail "$bare is not built (cmake --build build --target bare_allreduce)${1:+: $1}"
}
bare_field() { $py -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])[sys.argv[1]])" "$1"; }
# OpenMPI as ringlab's launcher sets it up on one machine (engine/control/openmpi_settings.h): the
# report of a run with no epochs names the settings its mpirun gave the ranks (the launcher's
# defaults here, such as the single copy where this machine allows it, or the caller's own
# OMPI_MCA_* values), read once per bench into $work/mpi_settings.env.
ringlab_mpi_settings() {  # -> $work/mpi_settings.env, NAME=value lines
  local file=$work/mpi_settings.env
  if [[ ! -s $file ]]; then
    "$ringlab" run -q -n 2 --backend mpi --epochs 0 --report "$work/mpi_settings.json" >/dev/null 2>"$work/mpi_settings.err" ||
      bench_fail "ringlab run --backend mpi failed, so its OpenMPI settings are unknown: $(tail -3 "$work/mpi_settings.err")"
    $py -c "import json,sys; [print(f'{k}={v}') for k, v in json.load(open(sys.argv[1]))['mpi_settings'].items()]" \
      "$work/mpi_settings.json" >"$file"
  fi
}
bare_run_mpi() {  # field ranks bare_allreduce-arguments...
  local key=$1 ranks=$2 settings line
  shift 2
  ringlab_mpi_settings
  # What the caller's environment sets itself wins, as in ringlab's launcher (the file may hold
  # another value from the call that wrote it, e.g. step_floor.sh's mpi_yield_when_idle).
  settings=()
  while IFS= read -r line; do [[ -v ${line%%=*} ]] || settings+=("$line"); done <"$work/mpi_settings.env"
  env "${settings[@]}" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe -np "$ranks" --bind-to none "$bare" mpi "$@" >"$work/bare.out" 2>"$work/bare.err" ||
    bench_fail "bench/bare_allreduce on $ranks MPI ranks failed: $(tail -3 "$work/bare.err")"
  bare_field "$key" <"$work/bare.out"
}
bare_run_gloo() {  # field ranks bare_allreduce-arguments...
  local key=$1 ranks=$2 dir r pids=() status=0
  shift 2
  dir=$(mktemp -d -p "$work")
  : >"$work/bare.err"
  for ((r = ranks - 1; r > 0; --r)); do
    RANK=$r WORLD_SIZE=$ranks STORE_DIR=$dir "$bare" gloo "$@" >/dev/null 2>>"$work/bare.err" &
    pids+=($!)
  done
  RANK=0 WORLD_SIZE=$ranks STORE_DIR=$dir "$bare" gloo "$@" >"$work/bare.out" 2>>"$work/bare.err" || status=1
  for r in "${pids[@]}"; do wait "$r" || status=1; done
  [[ $status -eq 0 ]] || bench_fail "bench/bare_allreduce on $ranks gloo ranks failed: $(tail -3 "$work/bare.err")"
  bare_field "$key" <"$work/bare.out"
}
