#!/usr/bin/python3
"""`golden.py make RUN.json NAME "FLAGS"` prints the golden for a ddp_reference.py run: its
results without the timing, with the configuration and the PyTorch version that made it."""
import json
import sys


def make(run_path, name, flags):
    import torch  # only to record which PyTorch made the golden

    run = json.load(open(run_path))
    golden = {"config": name, "flags": flags, "made_by": "tests/parity/make_goldens.sh",
              "pytorch": torch.__version__, "world_size": run["world_size"], "grad_demo": run["grad_demo"],
              "batches_per_epoch": run["batches_per_epoch"], "steps": run["steps"],
              "epoch_mse": run["epoch_mse"], "shards": run["shards"], "step_loss": run["step_loss"]}
    return json.dumps(golden, separators=(",", ":")) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "make":
        sys.exit('usage: golden.py make RUN.json NAME "FLAGS"')
    sys.stdout.write(make(sys.argv[2], sys.argv[3], sys.argv[4]))
