#!/usr/bin/python3
"""The course's ddp_cpu.py generalised to N ranks, run with real PyTorch DDP (gloo).

Usage: ddp_reference.py --world-size N [--samples 256 --batch-size 32 --epochs 4 --lr 0.03
                        --momentum 0 --weight-decay 0 --grad-accum 1
                        --seed 5 --no-shuffle --drop-last --out result.json]

--grad-accum K accumulates K micro-batches before each optimizer step, the first K-1 under
DDP's no_sync() (no all-reduce), the last one synchronising; the windows restart every epoch and
the epoch's last batch always steps. The loss is not divided by K.

Starts N processes by hand (torchrun crashes at start in Debian's 1.13 build), each with RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT set, and writes one JSON with every rank's shards and
step losses, rank 0's per-epoch MSE over the whole dataset, and microseconds per training step
(the training loop only, timed after a barrier, without the per-epoch evaluation).
"""
import argparse
import datetime
import contextlib
import json
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(args):
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.manual_seed(args.seed)
    n = args.samples
    X = torch.randn(n, 6)
    w = torch.randn(6, 1)
    Y = X @ w + 0.1 * torch.randn(n, 1)
    # A rank that never arrives (its connection to the store lost) ends the run in two minutes,
    # not PyTorch's default half hour.
    dist.init_process_group(backend="gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=120))
    grad = torch.tensor([1.0, 2.0, 3.0])
    dist.all_reduce(grad, op=dist.ReduceOp.SUM)
    layers, width = [], 6
    for h in args.hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.Tanh()]
        width = h
    layers.append(torch.nn.Linear(width, 1))
    model = torch.nn.Sequential(*layers)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    dataset = TensorDataset(X, Y)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=not args.no_shuffle,
                                 seed=args.seed, drop_last=args.drop_last)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    shards, step_loss, mse, train_s = [], [], [], 0.0
    dist.barrier()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        shards.append(list(iter(sampler)))
        t0 = time.perf_counter()
        k = args.grad_accum
        for i, (x, y) in enumerate(loader):
            sync = k <= 1 or (i + 1) % k == 0 or i + 1 == len(loader)
            if k <= 1 or i % k == 0:
                opt.zero_grad()
            with contextlib.nullcontext() if sync else ddp.no_sync():
                loss = ((ddp(x) - y) ** 2).mean()
                loss.backward()
            if sync:
                opt.step()
            step_loss.append(loss.item())
        train_s += time.perf_counter() - t0
        with torch.no_grad():
            mse.append(float(((model(X) - Y) ** 2).mean()))
    steps = len(step_loss)
    result = {"rank": rank, "grad_demo": grad.tolist(), "batches_per_epoch": len(loader), "shards": shards,
              "step_loss": step_loss, "epoch_mse": mse, "steps": steps,
              "us_per_step": train_s * 1e6 / max(steps, 1)}
    dist.destroy_process_group()
    with open(f"{args.out}.rank{rank}", "w") as f:
        json.dump(result, f)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world-size", type=int, default=1)
    p.add_argument("--samples", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=0.03)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--hidden", type=lambda s: [int(x) for x in s.split(",")], default=[48, 48])
    p.add_argument("--no-shuffle", action="store_true")
    p.add_argument("--drop-last", action="store_true")
    p.add_argument("--out", default="pytorch_result.json")
    p.add_argument("--as-rank", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.as_rank:
        return rank_main(args)
    port = free_port()
    procs = []
    for r in range(args.world_size):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(args.world_size),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, __file__, "--as-rank"] + sys.argv[1:], env=env))
    # One rank failing leaves the others waiting for it: they are ended at once, as torchrun does.
    deadline = time.monotonic() + 900
    while any(proc.poll() is None for proc in procs):
        if any(proc.returncode not in (None, 0) for proc in procs) or time.monotonic() > deadline:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
            break
        time.sleep(0.1)
    codes = [proc.wait() for proc in procs]
    if any(codes):
        sys.exit(f"a PyTorch rank failed: exit codes {codes}")
    ranks = []
    for r in range(args.world_size):
        with open(f"{args.out}.rank{r}") as f:
            ranks.append(json.load(f))
        os.unlink(f"{args.out}.rank{r}")
    merged = {"world_size": args.world_size, "grad_demo": ranks[0]["grad_demo"],
              "batches_per_epoch": ranks[0]["batches_per_epoch"],
              "shards": [r["shards"] for r in ranks], "step_loss": [r["step_loss"] for r in ranks],
              "epoch_mse": ranks[0]["epoch_mse"], "steps": ranks[0]["steps"],
              "us_per_step": max(r["us_per_step"] for r in ranks)}
    with open(args.out, "w") as f:
        json.dump(merged, f)


if __name__ == "__main__":
    main()
