"""One rank of the small DDP jobs tests/python/test_torch_watch.py runs (started with torchrun's
environment and a fake event server's address). It trains a tiny MLP under ringlab_torch.watch
and, beside it, the same model under plain DDP (no hook) in the same process group, and writes
what it saw to $RESULT_PATH: its shards, its losses, and both models' gradients at every step."""
import argparse
import copy
import gc
import json
import os
import sys
import time
import weakref

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset  # noqa: E402

import ringlab_torch  # noqa: E402


def flat_grads(model):
    return [float(v) for p in model.parameters() for v in p.grad.reshape(-1).tolist()]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--teaching", action="store_true")
    p.add_argument("--fail-at-step", type=int, default=-1)
    p.add_argument("--skip-at-step", type=int, default=-1, help="leave out this step (a batch dropped)")
    p.add_argument("--exit-at-step", type=int, default=-1, help="os._exit(3) before this step: no error, no last events")
    p.add_argument("--stall-at-step", type=int, default=-1, help="sleep 10 minutes before this step")
    p.add_argument("--nap-at-step", type=int, default=-1, help="sleep --nap-s seconds before this step, then go on")
    p.add_argument("--nap-s", type=float, default=2.0)
    p.add_argument("--extra-at-step", type=int, default=-1, help="one dist.all_reduce of a single float more, before this step")
    p.add_argument("--stall-before-init", action="store_true", help="sleep 10 minutes before init_process_group")
    p.add_argument("--fail-rank", type=int, default=-1, help="the rank that fails, skips or stalls (-1: every rank)")
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--unnamed-epochs", action="store_true", help="do not tell watch() how many epochs")
    args = p.parse_args()
    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.manual_seed(3)
    X = torch.randn(args.samples, 3)
    Y = X.sum(dim=1, keepdim=True)
    if args.stall_before_init and args.fail_rank in (-1, rank):
        time.sleep(600)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    # 3*4+4 + 4*1+1 = 21 parameters: one bucket of at most 64 values, so values travel
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    twin = copy.deepcopy(model)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    plain = torch.nn.parallel.DistributedDataParallel(twin)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    twin_opt = torch.optim.SGD(plain.parameters(), lr=0.1)
    dataset = TensorDataset(X, Y)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=7)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    watcher = ringlab_torch.watch(ddp, sampler=sampler, optimizer=opt, seed=3,
                                  epochs=None if args.unnamed_epochs else args.epochs,
                                  teaching=args.teaching)

    seen = {"shards": [], "losses": [], "grads": [], "plain_grads": [], "final": []}
    step = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        seen["shards"].append(list(iter(sampler)))
        for x, y in loader:
            if step == args.fail_at_step and args.fail_rank in (-1, rank):
                raise RuntimeError("a failure on purpose")
            if step == args.exit_at_step and args.fail_rank in (-1, rank):
                os._exit(3)
            if step == args.stall_at_step and args.fail_rank in (-1, rank):
                time.sleep(600)
            if step == args.nap_at_step and args.fail_rank in (-1, rank):
                time.sleep(args.nap_s)
            if step == args.extra_at_step and args.fail_rank in (-1, rank):
                dist.all_reduce(torch.zeros(1))
            if step == args.skip_at_step and args.fail_rank in (-1, rank):
                step += 1
                continue
            opt.zero_grad()
            twin_opt.zero_grad()
            loss = ((ddp(x) - y) ** 2).mean()
            loss.backward()
            ((plain(x) - y) ** 2).mean().backward()
            seen["grads"].append(flat_grads(model))
            seen["plain_grads"].append(flat_grads(twin))
            opt.step()
            twin_opt.step()
            watcher.step(loss)
            seen["losses"].append(float(loss))
            step += 1
        if rank == 0:
            with torch.no_grad():
                watcher.epoch_end(float(((model(X) - Y) ** 2).mean()))
    seen["final"] = [float(v) for p in model.parameters() for v in p.detach().reshape(-1).tolist()]
    # What atexit would do, then: once the script lets go of its DDP model, nothing of ringlab's
    # keeps it (and the process group it holds) alive into the interpreter's shutdown.
    watcher.close()
    ddp_alive = weakref.ref(ddp)
    del ddp, loss
    gc.collect()
    seen["ddp_freed_after_close"] = ddp_alive() is None
    if "RESULT_PATH" in os.environ:
        with open(os.environ["RESULT_PATH"], "w") as f:
            json.dump(seen, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
