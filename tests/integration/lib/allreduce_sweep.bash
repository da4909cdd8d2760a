# Sourced by gloo_allreduce.sh and mpi_allreduce.sh (not a test itself: ctest runs only the
# *.sh files directly in tests/integration).
#
# allreduce_sweep RINGLAB BACKEND: `ringlab bench allreduce` over BACKEND at 2 and 4 ranks; every
# size from 4 B to 4 MiB appears once, with the ring and the backend's own all-reduce, and no
# element is wrong. Exits 77 when the backend cannot run here, 1 on a failure, 0 on success.
sweep_fail() { echo "FAIL: $*"; exit 1; }

# check_sweep_table FILE: 21 rows (4 B .. 4 MiB, doubling), float/sum, count = size/4, #wrong 0
# for both algorithms, a ring/native ratio on every row.
check_sweep_table() {
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

allreduce_sweep() {
  local ringlab=$1 backend=$2 work probe
  work="$(mktemp -d)"
  trap "rm -rf '$work'" EXIT

  probe="$("$ringlab" bench allreduce --backend "$backend" --world-size 1 -b 4 -e 4 -n 1 -w 0 2>&1)"
  if grep -q "cannot run here" <<<"$probe"; then
    echo "SKIP: $(grep -o "backend '$backend' cannot run here[^(]*" <<<"$probe")"
    exit 77
  fi
  if grep -q "needs mpirun" <<<"$probe"; then
    echo "SKIP: MPI is built in but mpirun is not on PATH"
    exit 77
  fi

  local ranks out
  for ranks in 2 4; do
    out="$work/table-$ranks.txt"
    "$ringlab" bench allreduce --backend "$backend" --world-size "$ranks" --algorithm both -b 4 -e 4M --check \
      -n 5 -w 2 --timeout 60 --json "$work/result-$ranks.json" >"$out" 2>"$work/err-$ranks.txt" ||
      { cat "$out" "$work/err-$ranks.txt"; sweep_fail "bench with $ranks ranks exited with $?"; }
    cat "$out"
    check_sweep_table "$out" || sweep_fail "table for $ranks ranks"
    grep -q "# Out of bounds values : 0 OK" "$out" || sweep_fail "summary for $ranks ranks"
    grep -q '"world_size": '"$ranks" "$work/result-$ranks.json" || sweep_fail "JSON for $ranks ranks"
    [ "$(grep -c '"wrong": 0' "$work/result-$ranks.json")" -eq 42 ] || sweep_fail "JSON #wrong for $ranks ranks"
  done
  pingpong_check "$ringlab" "$backend" "$work"
  echo "PASS"
}

# `ringlab bench pingpong` with a third rank that only waits: a small message and one of 3 MiB, its
# exchange cut the ring's way (several segments on either backend) and into 64 KiB segments (48,
# more than either backend keeps posted ahead). The exchange checks every element it received
# (the bench fails otherwise); here every figure is present, positive and consistent with the others.
pingpong_check() {
  local ringlab=$1 backend=$2 work=$3 cut
  for cut in auto 64K; do
    "$ringlab" bench pingpong --backend "$backend" --world-size 3 --sizes 4,3M -n 3 -w 1 --timeout 60 \
      --exchange-segment-bytes "$cut" --json "$work/pingpong.json" >"$work/pingpong.txt" 2>&1 ||
      { cat "$work/pingpong.txt"; sweep_fail "bench pingpong (exchange segments: $cut) exited with $?"; }
    cat "$work/pingpong.txt"
    /usr/bin/python3 - "$work/pingpong.json" <<'PY' || sweep_fail "bench pingpong's JSON (exchange segments: $cut)"
import json, sys
out = json.load(open(sys.argv[1]))
rows = out["rows"]
assert [r["size"] for r in rows] == [4, 3 << 20], rows
for r in rows:
    assert 0 < r["min_one_way_us"] <= r["one_way_us"], r
    assert r["exchange_us"] > 0, r
    assert abs(r["gbps"] - r["size"] / (r["one_way_us"] * 1e3)) <= 1e-6 * r["gbps"], r
    assert abs(r["exchange_gbps"] - r["size"] / (r["exchange_us"] * 1e3)) <= 1e-6 * r["exchange_gbps"], r
    assert r["sum_us"] >= 0, r
    both = r["size"] / ((r["exchange_us"] + r["sum_us"]) * 1e3)
    assert abs(r["exchange_sum_gbps"] - both) <= 1e-6 * both, r
assert out["world_size"] == 3 and out["iters"] == 3, out
PY
  done
}
