# Shared by the bench/*.sh scripts: where things are, the seed's job, and the median.
# Sets here, ringlab (first argument, else build/app/ringlab), repeat, py, job and a work
# directory removed on exit; leaves the remaining arguments in bench_args.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_name=$(basename "$0")
bench_fail() { echo "$bench_name: $*" >&2; exit 2; }
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
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The seed's job (docs/reference-measurements.md): 4096 samples, batch 32 per rank, 5 epochs.
job=(--samples 4096 --batch-size 32 --epochs 5)

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# field FILE KEY: one top-level field of a JSON file.
field() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
us() { field "$1" us_per_step; }
