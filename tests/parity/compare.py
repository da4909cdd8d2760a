#!/usr/bin/python3
"""Compares two runs of the same job, each a `ringlab run --report` JSON, a ddp_reference.py JSON
or a golden (golden/*.json): `compare.py A B [TOL]`.

Shards must be identical for every rank and epoch; per-epoch MSE within TOL (1e-5); per-step
local losses within 1e-4 (they are printed by nobody, so a looser bar); the all-reduce demo
exact. Prints one line per check and exits 1 if any fails. Standard library only: it runs where
PyTorch is not installed."""
import json
import sys


def load(path):
    """The fields compared, whichever of the three formats `path` holds."""
    d = json.load(open(path))
    demo = d["allreduce_demo"]["output"] if "allreduce_demo" in d else d["grad_demo"]
    return {"world_size": d["world_size"], "demo": demo, "batches_per_epoch": d["batches_per_epoch"],
            "shards": d["shards"], "epoch_mse": d["epoch_mse"], "step_loss": d["step_loss"]}


def compare(a, b, tol=1e-5):
    ok = True

    def check(cond, what):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what)
        ok = ok and cond

    check(a["world_size"] == b["world_size"], f"world size {a['world_size']} vs {b['world_size']}")
    check(a["demo"] == b["demo"], f"all-reduce demo {a['demo']} vs {b['demo']}")
    check(a["batches_per_epoch"] == b["batches_per_epoch"],
          f"batches per epoch {a['batches_per_epoch']} vs {b['batches_per_epoch']}")
    check(a["shards"] == b["shards"], "sampler shards identical for every rank and epoch")
    diffs = [abs(x - y) for x, y in zip(a["epoch_mse"], b["epoch_mse"])]
    check(len(a["epoch_mse"]) == len(b["epoch_mse"]) and max(diffs, default=0) <= tol,
          f"epoch MSE max |diff| {max(diffs, default=0):.2e} <= {tol:g}  {a['epoch_mse']} vs {b['epoch_mse']}")
    step_diffs = [abs(x - y) for ra, rb in zip(a["step_loss"], b["step_loss"]) for x, y in zip(ra, rb)]
    same_steps = [len(r) for r in a["step_loss"]] == [len(r) for r in b["step_loss"]]
    check(same_steps and max(step_diffs, default=0) <= 1e-4,
          f"step losses: same count per rank, max |diff| {max(step_diffs, default=0):.2e} <= 1e-4")
    return ok


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: compare.py A.json B.json [tolerance]")
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
    sys.exit(0 if compare(load(sys.argv[1]), load(sys.argv[2]), tol) else 1)
