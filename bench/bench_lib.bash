# Shared by the bench/*.sh scripts: where things are, the seed's job, and the median.
# Sets here, ringlab (first argument, else build/app/ringlab), repeat, py, job and a work
# directory removed on exit; leaves the remaining arguments in bench_args.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ringlab=${1:-$here/build/app/ringlab}
shift || true
bench_args=("$@")
repeat=${REPEAT:-3}
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The seed's job (docs/reference-measurements.md): 4096 samples, batch 32 per rank, 5 epochs.
job=(--samples 4096 --batch-size 32 --epochs 5)

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# field FILE KEY: one top-level field of a JSON file.
field() { $py -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
us() { field "$1" us_per_step; }
