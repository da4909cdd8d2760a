#!/bin/bash
# `ringlab bench allreduce` over gloo, 2 and 4 ranks (one process per rank, TCP on 127.0.0.1): every
# size from 4 B to 4 MiB appears once, with the ring and gloo::allreduce, and no element is wrong.
# Usage: gloo_allreduce.sh <ringlab binary> <source dir>. Exit 77: gloo is not built in.
set -u
ringlab="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

probe="$("$ringlab" bench allreduce --backend gloo --world-size 1 -b 4 -e 4 -n 1 -w 0 2>&1)"
if grep -q "cannot run here" <<<"$probe"; then
  echo "SKIP: $(grep -o "backend 'gloo' cannot run here[^(]*" <<<"$probe")"
  exit 77
fi

fail() { echo "FAIL: $*"; exit 1; }

# check_table FILE: 21 rows (4 B .. 4 MiB, doubling), float/sum, count = size/4, #wrong 0 for
# both algorithms, a ring/native ratio on every row.
check_table() {
  awk '
    /^#/ || NF == 0 { next }
    {
      rows++
      want = 4 * 2 ^ (rows - 1)
      if ($1 != want) { print "row " rows ": size " $1 ", expected " want; bad = 1 }
      if ($2 != $1 / 4) { print "row " rows ": count " $2 " for size " $1; bad = 1 }
      if ($3 != "float" || $4 != "sum") { print "row " rows ": type/redop " $3 "/" $4; bad = 1 }
      if (NF != 13) { print "row " rows ": " NF " columns, expected 13"; bad = 1 }
      if ($8 != 0 || $12 != 0) { print "row " rows ": #wrong ring " $8 ", native " $12; bad = 1 }
    }
    END {
      if (rows != 21) { print rows " rows, expected 21"; bad = 1 }
      exit bad
    }' "$1"
}

for ranks in 2 4; do
  out="$work/table-$ranks.txt"
  "$ringlab" bench allreduce --backend gloo --world-size "$ranks" --algorithm both -b 4 -e 4M --check \
    -n 5 -w 2 --timeout 60 --json "$work/result-$ranks.json" >"$out" 2>"$work/err-$ranks.txt" ||
    { cat "$out" "$work/err-$ranks.txt"; fail "bench with $ranks ranks exited with $?"; }
  cat "$out"
  check_table "$out" || fail "table for $ranks ranks"
  grep -q "# Out of bounds values : 0 OK" "$out" || fail "summary for $ranks ranks"
  grep -q '"world_size": '"$ranks" "$work/result-$ranks.json" || fail "JSON for $ranks ranks"
  [ "$(grep -c '"wrong": 0' "$work/result-$ranks.json")" -eq 42 ] || fail "JSON #wrong for $ranks ranks"
done
echo "PASS"
