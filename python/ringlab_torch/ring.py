"""Ring all-reduce over torch.distributed's point-to-point sends, for teaching.

N ranks hold a tensor cut into N chunks (sizes differ by at most one element; the first
count % N chunks get the extra one, as ringlab's ring_chunk cuts them). Each rank sends only to
its right neighbour (rank + 1) and receives only from its left one (rank - 1).

Reduce-scatter, N - 1 steps. At step s rank r sends chunk (r - s) mod N and receives chunk
(r - s - 1) mod N, adding what arrives into its own copy. Why those chunks: at step 0 every rank
starts the partial sum of the chunk named after itself, and every step passes each partial sum
one place to the right. So the partial sum of chunk c sits at rank c + s after s steps, holding
s + 1 ranks' contributions; what rank r receives at step s started s + 1 places to its left
(chunk r - s - 1), and what it forwards is what it received and added to at step s - 1 (chunk
r - s). After N - 1 steps the sum of chunk c has visited every rank: rank r holds the complete
chunk (r + 1) mod N.

All-gather, N - 1 more steps. Each complete chunk goes round once more, overwriting instead of
adding: at step s rank r sends chunk (r + 1 - s) mod N (first the one it completed, then the one
it just received) and receives chunk (r - s) mod N. Then every rank holds every complete chunk.

Each rank sends 2 (N - 1) / N of the tensor in all, whatever N is: the ring is
bandwidth-optimal. Steps run one after the other here (no pipelining), so that each reported
chunk is one whole ring step.
"""
import datetime
import time
from dataclasses import dataclass
from typing import Callable, Optional

import torch
import torch.distributed as dist

from .wire import RingPhase

# Tags keep apart the messages of different collectives between the same two ranks.
_STEPS_PER_TAG_BLOCK = 256
_TAG_BLOCKS = 4096


@dataclass
class Chunk:
    offset: int
    count: int


def ring_chunk(count: int, world: int, chunk: int) -> Chunk:
    """Chunk `chunk` of a `count`-element tensor cut into `world` chunks."""
    base, extra = divmod(count, world)
    return Chunk(chunk * base + min(chunk, extra), base + (1 if chunk < extra else 0))


def send_chunk(phase: RingPhase, rank: int, ring_step: int, world: int) -> int:
    if phase == RingPhase.REDUCE_SCATTER:
        return (rank - ring_step) % world
    return (rank + 1 - ring_step) % world


def recv_chunk(phase: RingPhase, rank: int, ring_step: int, world: int) -> int:
    if phase == RingPhase.REDUCE_SCATTER:
        return (rank - ring_step - 1) % world
    return (rank - ring_step) % world


@dataclass
class ChunkReceived:
    """What one ring step delivered to this rank, for the ChunkTransfer event."""
    phase: RingPhase
    ring_step: int
    chunk: int
    src: int
    dst: int
    elements: int
    t_posted_ns: int    # when this rank had posted both its send and its receive of the step
    t_done_ns: int      # when the receive had completed (and, in reduce-scatter, been added)
    values: torch.Tensor  # the receiver's whole chunk after this step (a view: copy to keep)


def _global_rank(group, group_rank: int) -> int:
    """isend/irecv take ranks of the default group, also when talking within a subgroup."""
    if group is None or group is dist.GroupMember.WORLD:
        return group_rank
    return dist.distributed_c10d._get_global_rank(group, group_rank)


class RingStepError(RuntimeError):
    pass


def ring_all_reduce(buffer: torch.Tensor, *, group=None, collective_id: int = 0,
                    timeout: datetime.timedelta = datetime.timedelta(seconds=60),
                    on_chunk: Optional[Callable[[ChunkReceived], None]] = None,
                    context: str = "") -> torch.Tensor:
    """Sums the 1-D, contiguous `buffer` across the group's ranks, in place; returns it."""
    world = dist.get_world_size(group)
    rank = dist.get_rank(group)
    if world == 1:
        return buffer
    flat = buffer.view(-1)
    left, right = (rank - 1) % world, (rank + 1) % world
    scratch = torch.empty(ring_chunk(flat.numel(), world, 0).count, dtype=flat.dtype, device=flat.device)
    tag_base = (collective_id % _TAG_BLOCKS) * _STEPS_PER_TAG_BLOCK
    t = 0  # ring steps so far, both phases together
    for phase in (RingPhase.REDUCE_SCATTER, RingPhase.ALL_GATHER):
        for ring_step in range(world - 1):
            try:
                received = _one_step(flat, scratch, phase, ring_step, rank, world, left, right, group,
                                     tag_base + t, timeout)
            except Exception as e:
                name = "reduce-scatter" if phase == RingPhase.REDUCE_SCATTER else "all-gather"
                # Counted from 1 within its phase, as ringlab's own ring and its reports say it.
                raise RingStepError(f"{context}ring all-reduce {collective_id}, {name} step {ring_step + 1} of {world - 1}: "
                                    f"{type(e).__name__}: {e}") from e
            if received is not None and on_chunk is not None:
                on_chunk(received)
            t += 1
    return buffer


def _one_step(flat, scratch, phase, ring_step, rank, world, left, right, group, tag, timeout):
    out = ring_chunk(flat.numel(), world, send_chunk(phase, rank, ring_step, world))
    into_index = recv_chunk(phase, rank, ring_step, world)
    into = ring_chunk(flat.numel(), world, into_index)
    mine = flat[into.offset:into.offset + into.count]
    # Reduce-scatter adds what arrives, so it lands in scratch first; all-gather overwrites.
    target = scratch[:into.count] if phase == RingPhase.REDUCE_SCATTER else mine
    requests = []
    # An empty chunk (fewer elements than ranks) is neither sent nor received: its neighbour
    # computes the same empty size for it.
    if out.count > 0:
        requests.append(dist.isend(flat[out.offset:out.offset + out.count], _global_rank(group, right),
                                   group=group, tag=tag))
    if into.count > 0:
        requests.append(dist.irecv(target, _global_rank(group, left), group=group, tag=tag))
    posted = time.monotonic_ns()
    for request in requests:
        request.wait(timeout)
    if into.count == 0:
        return None
    if phase == RingPhase.REDUCE_SCATTER:
        mine.add_(target)
    return ChunkReceived(phase=phase, ring_step=ring_step, chunk=into_index, src=left, dst=rank,
                         elements=into.count, t_posted_ns=posted, t_done_ns=time.monotonic_ns(), values=mine)
