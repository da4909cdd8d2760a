#!/usr/bin/python3
"""Compares a `ringlab run --report` JSON with a ddp_reference.py JSON.

Shards must be identical for every rank and epoch; per-epoch MSE within --tol (1e-5);
per-step local losses within 1e-4 (they are printed by nobody, so a looser bar); the all-reduce
demo exact. Prints one line per check and exits 1 on the first mismatch."""
import json
import sys


def main(ringlab_path, torch_path, tol=1e-5):
    a = json.load(open(ringlab_path))
    b = json.load(open(torch_path))
    ok = True

    def check(cond, what):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what)
        ok = ok and cond

    check(a["world_size"] == b["world_size"], f"world size {a['world_size']}")
    check(a["allreduce_demo"]["output"] == b["grad_demo"], f"all-reduce demo {a['allreduce_demo']['output']}")
    check(a["batches_per_epoch"] == b["batches_per_epoch"], f"batches per epoch {a['batches_per_epoch']}")
    check(a["shards"] == b["shards"], "sampler shards identical for every rank and epoch")
    diffs = [abs(x - y) for x, y in zip(a["epoch_mse"], b["epoch_mse"])]
    check(len(a["epoch_mse"]) == len(b["epoch_mse"]) and max(diffs, default=0) <= tol,
          f"epoch MSE max |diff| {max(diffs, default=0):.2e} <= {tol:g}  ringlab {a['epoch_mse']} torch {b['epoch_mse']}")
    step_diffs = [abs(x - y) for ra, rb in zip(a["step_loss"], b["step_loss"]) for x, y in zip(ra, rb)]
    check(max(step_diffs, default=0) <= 1e-4, f"step losses max |diff| {max(step_diffs, default=0):.2e} <= 1e-4")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5))
