#!/usr/bin/python3
"""The course's ddp_cpu.py: a small regression MLP trained with PyTorch DDP on CPUs (gloo).

The same job as `ringlab run`: 256 samples of 6 features drawn from seed 5, a 6-48-48-1 Tanh
MLP, MSE, SGD with lr 0.03, batch 32 per rank, a DistributedSampler, 4 epochs; it prints the same
lines, and the same four MSE values as `ringlab run -n N` for the same N.

Run it as torchrun would, one process per rank (each with RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT set), or under ringlab, which draws it live:

    ringlab run --torch examples/ddp_cpu.py -n 2
    ringlab run --torch examples/ddp_cpu.py -n 4 -- --teaching   # every bucket as a drawn ring

By hand, without ringlab (PYTHONPATH=python finds ringlab_torch, which then does nothing):

    for r in 0 1; do PYTHONPATH=python RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \\
        MASTER_PORT=29500 python3 examples/ddp_cpu.py & done; wait

Started with no RANK at all, it runs as a world of one.
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import ringlab_torch  # ringlab draws this job when it started it; otherwise this does nothing

SEED = 5
SAMPLES = 256
FEATURES = 6
HIDDEN = (48, 48)
BATCH_SIZE = 32
LR = 0.03
EPOCHS = 4
SHOWN_INDICES = 8


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--teaching", action="store_true",
                   help="all-reduce each bucket as a ring of sends between neighbours, every chunk reported")
    p.add_argument("--epochs", type=int, default=EPOCHS)
    return p.parse_args()


def alone_unless_told():
    """torchrun's variables, set for a world of one when nobody set them."""
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")


def mlp():
    layers, width = [], FEATURES
    for h in HIDDEN:
        layers += [torch.nn.Linear(width, h), torch.nn.Tanh()]
        width = h
    layers.append(torch.nn.Linear(width, 1))
    return torch.nn.Sequential(*layers)


def say(rank, text=""):
    if rank == 0:
        print(text, flush=True)


def main():
    args = parse_args()
    alone_unless_told()
    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])

    # The order of draws from the global generator is the job: data first, then the model.
    torch.manual_seed(SEED)
    X = torch.randn(SAMPLES, FEATURES)
    w = torch.randn(FEATURES, 1)
    Y = X @ w + 0.1 * torch.randn(SAMPLES, 1)

    dist.init_process_group(backend="gloo", rank=rank, world_size=world)
    say(rank, f"backend                : {dist.get_backend()}")
    say(rank, f"world_size             : {world}")
    say(rank, f"rank of this process   : {rank}")
    demo = torch.tensor([1.0, 2.0, 3.0])
    dist.all_reduce(demo, op=dist.ReduceOp.SUM)  # every element becomes N times larger
    say(rank, f"all-reduce SUM (rank 0): {demo.tolist()} (sum over all ranks)")
    say(rank)

    model = mlp()
    ddp = torch.nn.parallel.DistributedDataParallel(model)  # rank 0's weights are broadcast
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    dataset = TensorDataset(X, Y)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=SEED)
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)
    # ringlab watches this job: the shards, steps, losses, buckets and all-reduces are drawn live.
    watcher = ringlab_torch.watch(ddp, sampler=sampler, optimizer=opt, loader=loader, epochs=args.epochs,
                                  seed=SEED, teaching=args.teaching, demo=([1.0, 2.0, 3.0], demo))

    per_rank = " per rank" if world > 1 else ""
    say(rank, f"batches per epoch      : {len(loader)} ({len(sampler)} samples{per_rank} / {BATCH_SIZE})")
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # without it every epoch repeats epoch 0's order
        if epoch == 0 and len(sampler) > 0:
            first = list(iter(sampler))[:SHOWN_INDICES]
            say(rank, f"epoch-0 indices, batch 1: [{', '.join(str(i) for i in first)}] ...")
        for x, y in loader:
            opt.zero_grad()
            loss = ((ddp(x) - y) ** 2).mean()
            loss.backward()  # DDP all-reduces the gradients, bucket by bucket, while this runs
            opt.step()
            watcher.step(loss)
        if rank == 0:
            with torch.no_grad():
                mse = float(((model(X) - Y) ** 2).mean())
            watcher.epoch_end(mse)
            say(rank, f"epoch {epoch + 1} done, MSE over the whole dataset: {mse:.6f}")

    dist.destroy_process_group()
    say(rank)
    say(rank, "destroy_process_group  : done")


if __name__ == "__main__":
    main()
