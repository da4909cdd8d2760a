#!/usr/bin/env bash
# A live change of world while the app trains: 4 ranks on gloo become 2 ranks (on MPI when it is
# built in), the loss curve goes on with a marker at the change, and the sampler re-shards.
# Called by ctest as: bash gui_live_change.sh <ringlab> <source-dir>. Exit 77 = skipped.
set -u
RINGLAB=${1:?usage: gui_live_change.sh <ringlab> <source-dir>}
SOURCE=${2:?usage: gui_live_change.sh <ringlab> <source-dir>}
export RINGLAB_SOURCE_DIR="$SOURCE"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "$0")/lib/headless.bash"

require_headless_app "$RINGLAB"

# The new backend: MPI when this build has it (the error names the available backends).
TARGET=gloo
if "$RINGLAB" run --world-size 1 --backend mpi --epochs 0 >/dev/null 2>&1; then TARGET=mpi; fi

# Long enough for the app to see step 12 and ask for the change before the run is over: the
# seed's 256 samples take 48 steps, over in a few frames now that a step costs half a millisecond.
printf '{"title": "live change", "job": {"world_size": 4, "backend": "gloo", "epochs": 24, "samples": 4096}}' >"$WORK/live.json"
headless 1280x1024x24 "$WORK/out.txt" "$RINGLAB" gui --scenario "$WORK/live.json" --frames 10 --wait-run \
  --switch "12:2:$TARGET" --state-json "$WORK/state.json" --screenshot "$WORK/live.png" ||
  { cat "$WORK/out.txt" >&2; fail "ringlab gui exited non-zero"; }

python3 - "$WORK/state.json" "$TARGET" <<'PY' || fail "the live change did not show up as expected"
import json, sys
state, target = json.load(open(sys.argv[1])), sys.argv[2]
gens = state["generations"]
assert [g["world_size"] for g in gens] == [4, 2], gens
assert gens[0]["backend"] == "gloo" and gens[1]["backend"] == target, gens
changes = state["world_changes"]
assert len(changes) == 1 and changes[0]["world_size"] == 2 and changes[0]["backend"] == target, changes
assert changes[0]["step"] >= 12, changes
# The ring's number says what changed: both the world and (with MPI built in) the backend.
ending = " since the change to 2 ranks" + (" on mpi" if target == "mpi" else "")
assert state["said"]["ring_number"].endswith(ending), (state["said"], ending)
# 4096 samples: 4 ranks take 32 batches of 32 per epoch, 2 ranks take 64; the run goes on to the end.
assert len(state["epoch_mse"]) == 24, len(state["epoch_mse"])
assert state["epoch_mse"][-1] < state["epoch_mse"][0], state["epoch_mse"]
assert not state["errors"], state["errors"]
# The workers' step time is the last world's own: the status says whose it is (in whole
# microseconds, rounded half away from zero, thousands grouped: 1,979 on a loaded machine).
us = "{:,}".format(int(state["us_per_step"] + 0.5))
assert state["said"]["pace"] == "%s µs per step in the last world (2 ranks on %s)" % (us, target), state["said"]
print("switched to 2 ranks on %s after step %.1f; %d steps in all" % (target, changes[0]["step"], state["latest_step"] + 1))
PY
# Growing the world, 4 -> 8 ranks: the ranks the change adds belong to the new world, so the ring
# and the sampler show 8 ranks.
printf '{"title": "grow", "job": {"world_size": 4, "backend": "gloo", "epochs": 24, "samples": 4096}}' >"$WORK/grow.json"
headless 1280x1024x24 "$WORK/grow.txt" "$RINGLAB" gui --scenario "$WORK/grow.json" --frames 10 --wait-run \
  --switch "12:8" --state-json "$WORK/grow-state.json" --screenshot "$WORK/grow.png" ||
  { cat "$WORK/grow.txt" >&2; fail "ringlab gui (4 -> 8) exited non-zero"; }
python3 - "$WORK/grow-state.json" <<'PY' || fail "growing the world live to 8 ranks did not show 8 ranks"
import json, sys
state = json.load(open(sys.argv[1]))
assert [g["world_size"] for g in state["generations"]] == [4, 8], state["generations"]
assert state["ring"] is not None and state["ring"]["world_size"] == 8, state["ring"]
# The 8-rank world counts its all-reduces from 1 again, and the ring says since when.
assert state["said"]["ring_number"].startswith("all-reduce #") and state["said"]["ring_number"].endswith(" since the change to 8 ranks"), state["said"]
assert state["sampler_newest"]["ranks"] == 8 and state["sampler_newest"]["generation"] == 2, state["sampler_newest"]
assert not state["errors"], state["errors"]
print("grew to 8 ranks: ring and sampler show 8")
PY
# The backend alone, 4 ranks on gloo to 4 on MPI: the ring's number names the backend, not a
# world size that did not change.
if [ "$TARGET" = mpi ]; then
  headless 1280x1024x24 "$WORK/backend.txt" "$RINGLAB" gui --scenario "$WORK/live.json" --frames 10 --wait-run \
    --switch "12:4:mpi" --state-json "$WORK/backend-state.json" ||
    { cat "$WORK/backend.txt" >&2; fail "ringlab gui (gloo -> mpi) exited non-zero"; }
  python3 - "$WORK/backend-state.json" <<'PY' || fail "a backend-only change was not named as one"
import json, sys
state = json.load(open(sys.argv[1]))
assert [(g["world_size"], g["backend"]) for g in state["generations"]] == [(4, "gloo"), (4, "mpi")], state["generations"]
assert state["said"]["ring_number"].endswith(" since the change to mpi"), state["said"]
print("gloo -> mpi at 4 ranks:", state["said"]["ring_number"])
PY
else
  echo "SKIP (visible): the backend-only change needs the MPI backend, which this build lacks"
fi
echo "PASS: live change of world"
