"""Draw your own PyTorch DDP job live in ringlab, with two lines.

    import ringlab_torch
    watcher = ringlab_torch.watch(ddp_model, sampler=sampler)   # after DDP and the sampler
    ...
    for epoch in range(epochs):
        sampler.set_epoch(epoch)           # reported: this rank's shard of the epoch
        for x, y in loader:
            ...
            loss.backward()
            optimizer.step()
            watcher.step(loss)             # reported: the step and its loss

Started by `ringlab run --torch script.py -n 2`, each rank reports to ringlab's event server (its
address and token come in RINGLAB_EVENT_ADDR and RINGLAB_TOKEN). Started any other way,
watch() returns a watcher that does nothing: no connection, no hook, no output.
See docs/torch_watch.md for what is reported and how.
"""
import sys
from .environment import read_environment
from .watcher import NullWatcher, Watcher

__all__ = ["watch", "Watcher", "NullWatcher"]


def warn_about_loader(loader, sampler):
    """The classic DistributedSampler bug, said where the script is started: a DataLoader that does
    not draw from the sampler gives every rank the whole dataset, while ringlab would draw the
    sampler's shards as if they were used."""
    if loader is None or sampler is None or getattr(loader, "sampler", None) is sampler:
        return
    print("ringlab_torch: the DataLoader passed to watch() does not draw from the sampler passed with it: "
          "every rank goes through the whole dataset (DataLoader(..., sampler=sampler) splits it), and the "
          "shards ringlab shows are not the batches this rank trains on", file=sys.stderr, flush=True)


def _with_dataset_size(job, loader):
    """Without a sampler the job's size comes from the loader's dataset, where it has a length."""
    try:
        samples = len(loader.dataset)
    except (AttributeError, TypeError):
        return job
    merged = {"samples": samples}
    merged.update(job or {})
    return merged


def watch(ddp_model, sampler=None, *, optimizer=None, loader=None, teaching=False, epochs=None, seed=None,
          batch_size=None, job=None, demo=None, timeout_s=60.0, environ=None):
    """Reports `ddp_model`'s training to ringlab, when ringlab started this process.

    ddp_model  the DistributedDataParallel model (after init_process_group and DDP)
    sampler    its DistributedSampler: each set_epoch(e) reports this rank's shard
    optimizer  reported: lr, momentum, weight decay in the job; each step() as a span
    loader     its DataLoader: the batch size (otherwise the first forward's batch shows it)
    teaching   all-reduce each bucket as a ring of sends between neighbours, every chunk drawn
    epochs, seed, batch_size   for the job ringlab shows (seed: torch.initial_seed() if not given)
    job        overrides of the job's fields (ringlab's JobConfig names: {"epochs": 4, ...})
    demo       (input, output) of an all-reduce the script ran itself, shown as ringlab's demo
    timeout_s  how long connecting, the handshake and a ring step may take
    environ    the environment to read (os.environ by default)
    """
    settings = read_environment(environ)
    if settings is None:
        return NullWatcher()
    import torch.distributed as dist
    from .client import EventClient
    from .watcher import install_exit_reporting
    if not dist.is_initialized():
        raise RuntimeError("ringlab_torch.watch(): call torch.distributed.init_process_group() and build "
                           "DistributedDataParallel first")
    if batch_size is None and loader is not None:
        batch_size = getattr(loader, "batch_size", None)
    warn_about_loader(loader, sampler)
    if sampler is None and loader is not None:
        job = _with_dataset_size(job, loader)
    rank = dist.get_rank(getattr(ddp_model, "process_group", None))  # the rank within DDP's group
    client = EventClient(settings.host, settings.port, settings.token, rank, timeout_s=timeout_s,
                         patience_s=max(600.0, 10 * timeout_s))
    # ringlab may ask for the drawn ring whatever the script says (the app's Algorithm: ring).
    teaching = teaching or settings.teaching
    watcher = Watcher(ddp_model, client, sampler=sampler, optimizer=optimizer, teaching=teaching,
                      batch_size=batch_size, epochs=epochs, seed=seed, job=job, demo=demo, timeout_s=timeout_s)
    install_exit_reporting(watcher)
    return watcher
