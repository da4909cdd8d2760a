"""Watches a PyTorch DDP job and reports what it does as ringlab events.

What is reported, and from where (the same events a ringlab worker sends, engine/rank/):

    RunBegin         once, before anything else: the job as JobConfig JSON
    CollectiveEnd    "broadcast": DDP's broadcast of rank 0's parameters (done before watch())
    CollectiveBegin/End "demo": the script's all_reduce demo, when watch(demo=...) is given
    SamplerShard     at each sampler.set_epoch(e): list(iter(sampler)), in pieces when long
    StepBegin        at the first forward of a step (forward pre-hook on the DDP module)
    Forward          the DDP module's forward (pre-hook .. post-hook)
    Backward         from the gradient reaching the model's output (a hook on the output tensor)
                     to the end of the backward pass, DDP's own finish included
    BucketReady, CollectiveBegin/End   every bucket DDP all-reduces (a communication hook)
    ChunkTransfer    every ring step's chunk, in teaching mode
    OptimizerStep    optimizer.step(), when watch(optimizer=...) is given
    StepEnd          watcher.step(loss): value = the loss
    EpochEnd         watcher.epoch_end(mse), rank 0
    Error            an exception that ends the script (sys.excepthook), with its context
    TornDown         SIGTERM from the controller
    FinalParameters  rank 0's parameters at exit; RunEnd at exit: us per step, steps, "done"
"""
import atexit
import datetime
import gc
import os
import signal
import sys
import threading
import time
import types
import weakref
from typing import Any, Dict, Optional, Sequence

from . import job as job_module
from . import wire
from .client import EventClient, ReportingError, warn
from .wire import Event, EventKind

# ringlab's rule (engine/dist/ring_allreduce.cpp, engine/ddp/distributed_data_parallel.cpp):
# values travel with chunk and collective events only for tensors of at most this many elements.
MAX_RECORDED_VALUES = 64
_ERROR_FLUSH_S = 2.0
_EXIT_FLUSH_S = 30.0
_TORN_DOWN_EXIT_S = 5.0   # beyond its flush, how long a SIGTERM's report may take to end the process
_CALLBACKS_RELEASED_S = 10.0


def now_ns() -> int:
    return time.monotonic_ns()


def error_words(exc: BaseException) -> str:
    """What an exception says, less the "At:" lines PyTorch appends to an error that went through
    a Python callback (DDP's communication hook: ringlab_torch's own frames, not the script's),
    which every failure report then listed under the rank's error."""
    text = str(exc)
    cut = text.find("\n\nAt:\n")
    return (text[:cut] if cut >= 0 else text).strip()


def error_code(exc: BaseException) -> wire.ErrorCode:
    """The ErrorCode of an exception. PyTorch's gloo errors are RuntimeErrors that say what
    happened only in words, so at this edge the words are read, once."""
    if isinstance(exc, TimeoutError):
        return wire.ErrorCode.TIMEOUT
    if isinstance(exc, ConnectionError):
        return wire.ErrorCode.PEER_CLOSED
    text = str(exc).lower()
    if "timed out" in text or "timeout" in text:
        return wire.ErrorCode.TIMEOUT
    if "connection closed by peer" in text or "connection reset" in text or "broken pipe" in text:
        return wire.ErrorCode.PEER_CLOSED
    return wire.ErrorCode.OTHER


class NullWatcher:
    """What watch() returns when ringlab did not start the script: every method does nothing."""
    enabled = False

    def step(self, loss=None) -> None:
        pass

    def set_epoch(self, epoch: int) -> None:
        pass

    def epoch_end(self, mse: float) -> None:
        pass

    def log(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


class Watcher(NullWatcher):
    enabled = True

    def __init__(self, ddp_model, client: EventClient, *, sampler=None, optimizer=None, teaching=False,
                 batch_size: Optional[int] = None, epochs: Optional[int] = None, seed: Optional[int] = None,
                 job: Optional[Dict[str, Any]] = None, demo=None, timeout_s: float = 60.0):
        import torch
        import torch.distributed as dist
        self._torch, self._dist = torch, dist
        self.ddp_model = ddp_model
        self.sampler = sampler
        self.teaching = teaching
        self._client = client
        self._group = getattr(ddp_model, "process_group", None)
        self.rank = dist.get_rank(self._group)
        self.world = dist.get_world_size(self._group)
        self._timeout = datetime.timedelta(seconds=timeout_s)
        self._job_inputs = dict(world_size=self.world, backend=dist.get_backend(self._group), teaching=teaching,
                                ddp_model=ddp_model, sampler=sampler, optimizer=optimizer, batch_size=batch_size,
                                epochs=epochs, seed=torch.initial_seed() if seed is None else seed,
                                overrides=job)
        job_module.check_overrides(job or {})  # a wrong override fails here, not at the first step

        self._lock = threading.Lock()      # the fields below: hooks run on autograd and gloo threads
        self._began = False
        self._early = []                   # events that happened before RunBegin could be sent
        self._closed = False
        self._failed = False
        # The thread reporting a SIGTERM, which ends the process once its report is out: events
        # of other threads (the script's own epoch_end, say) wait for that end instead of racing
        # past the report, so the script prints no line whose event ringlab never got.
        self._torn_down_by = None
        self.steps = 0                     # steps ended so far; the current step's number
        self.epoch = getattr(sampler, "epoch", 0) if sampler is not None else 0
        self._step_open_ns = 0             # when the current step began; 0: no step open
        self._train_ns = 0
        self._shard_epoch = None           # (epoch, steps) of the last shard sent
        self._collective_id = 0
        self._forward_ns = 0
        # The comm hook's callbacks that a gloo thread may still hold (see _let_go_of_the_script).
        self._callbacks = weakref.WeakSet()

        self._report_setup(ddp_model, demo)
        self._hooks = [ddp_model.register_forward_pre_hook(self._before_forward),
                       ddp_model.register_forward_hook(self._after_forward)]
        self._register_comm_hook(ddp_model)
        if sampler is not None and hasattr(sampler, "set_epoch"):
            self._wrap_set_epoch(sampler)
        if optimizer is not None:
            self._wrap_optimizer_step(optimizer)
        # Without a batch size RunBegin waits for the first training forward, whose batch shows it.
        if self._job_inputs["batch_size"] is not None or "batch_size" in (job or {}):
            self._begin()

    # The script's calls.

    def step(self, loss=None) -> None:
        """Ends the current training step; `loss` (a tensor or a number) is its local loss."""
        value = self._loss_value(loss)
        end = now_ns()
        with self._lock:
            began = self._step_open_ns or end
            self._step_open_ns = 0
            step, epoch = self.steps, self.epoch
            self.steps += 1
            self._train_ns += end - began
        if began == end:  # no forward was seen: the step is only its end
            self._send(self._event(EventKind.STEP_BEGIN, step=step, epoch=epoch, t_begin_ns=end, t_end_ns=end))
        self._send(self._event(EventKind.STEP_END, step=step, epoch=epoch, t_begin_ns=began, t_end_ns=end,
                               value=value))

    def set_epoch(self, epoch: int) -> None:
        """sampler.set_epoch(epoch) and the shard it makes (or just the epoch, without a sampler)."""
        if self.sampler is not None:
            self.sampler.set_epoch(epoch)  # wrapped: reports the shard
        else:
            with self._lock:
                self.epoch = int(epoch)

    def epoch_end(self, mse: float) -> None:
        """The epoch's metric (ringlab: MSE over the whole dataset), reported by rank 0."""
        if self.rank != 0:
            return
        self._send(self._event(EventKind.EPOCH_END, step=self.steps, epoch=self.epoch, value=float(mse)))

    def log(self, text: str) -> None:
        self._send(self._event(EventKind.LOG, step=self.steps, epoch=self.epoch, text=str(text)))

    def close(self, status: str = "done") -> None:
        """The run's end: final parameters (rank 0), RunEnd, everything flushed. Runs at exit."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if not self._failed:
            self._begin()
            if self.rank == 0:
                self._send_final_parameters()
            self._send(self._run_end(status))
        for handle in self._hooks:
            handle.remove()
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close(_EXIT_FLUSH_S)
            except ReportingError as e:
                warn(f"rank {self.rank}: the run's last events may not have reached ringlab: {e}")
        self._let_go_of_the_script()

    def _let_go_of_the_script(self) -> None:
        """The run is over: the script's DDP model (which holds the process group), sampler and
        optimizer are no longer held here. close() runs at exit, and this watcher lives on in
        atexit's list: holding them, it kept gloo's process group alive into the interpreter's
        own shutdown, where tearing down its threads can abort the process (SIGABRT, "terminate
        called without an active exception"), after a run that went well. Freed now, with the
        interpreter whole, they are torn down as they would be without ringlab.

        First the gloo threads must have let go of the comm hook's callbacks. A thread runs a
        callback when its all-reduce ends, completes DDP's future, and only then drops the
        callback, for which it needs the GIL. On a busy machine the script can reach its end
        first; freeing the DDP model here (with the GIL held) joins the process group's threads,
        and the one waiting for the GIL never ends: the script hangs at exit. Sleeping lets the
        GIL go until every callback is gone."""
        deadline = time.monotonic() + _CALLBACKS_RELEASED_S
        while len(self._callbacks) and time.monotonic() < deadline:
            time.sleep(0.001)
        if len(self._callbacks):
            warn(f"rank {self.rank}: {len(self._callbacks)} all-reduce callbacks were still held by gloo's threads "
                 f"after {_CALLBACKS_RELEASED_S:g} s; freeing the model anyway")
        self.ddp_model = None
        self.sampler = None
        self._group = None
        self._job_inputs = None
        gc.collect()  # DDP's hooks make cycles: free them now, not at shutdown

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is not None:
            self.report_error(exc)
        self.close()

    # Failures.

    def report_error(self, exc: BaseException) -> None:
        """Sends an Error event for `exc` (with rank and step) and waits briefly for it to leave."""
        with self._lock:
            if self._failed or self._closed:
                return
            self._failed = True
            step = self.steps
        self._begin()
        self._send(self._event(EventKind.ERROR, step=step, epoch=self.epoch, code=int(error_code(exc)),
                               text=f"rank {self.rank}: step {step}: {type(exc).__name__}: {error_words(exc)}"))
        self._flush(_ERROR_FLUSH_S)

    def report_torn_down(self) -> None:
        """SIGTERM: the controller takes the group down (a stop, or another rank failed). Then
        the steps done so far, as a RunEnd "stopped", so a stopped run's report counts them.
        No final parameters: the rank may be in the middle of a step."""
        with self._lock:
            if self._failed or self._closed:
                return
            self._failed = True
            self._torn_down_by = threading.get_ident()
        self._begin()
        self._send(self._event(EventKind.TORN_DOWN, step=self.steps, text="stopped by the controller (SIGTERM)"))
        self._send(self._run_end("stopped"))
        self._flush(_ERROR_FLUSH_S)

    def _run_end(self, status: str) -> Event:
        us = self._train_ns / 1000.0 / self.steps if self.steps else 0.0
        return self._event(EventKind.RUN_END, step=self.steps, value=us, text=status)

    # Sending.

    def _event(self, kind: EventKind, **fields) -> Event:
        event = Event(kind=int(kind), rank=self.rank, **fields)
        if not event.t_begin_ns:
            event.t_begin_ns = event.t_end_ns = now_ns()
        return event

    def _send(self, event: Event) -> None:
        with self._lock:
            held = self._torn_down_by not in (None, threading.get_ident())
            if not held and not self._began:
                self._early.append(event)
                return
        if held:
            threading.Event().wait(_ERROR_FLUSH_S + _TORN_DOWN_EXIT_S)  # the process ends meanwhile
            return
        self._emit(event)

    def _emit(self, event: Event) -> None:
        client = self._client
        if client is None:
            return
        try:
            client.emit(event)
        except ReportingError as e:
            self._client = None  # training goes on; only the drawing stops
            warn(f"rank {self.rank}: step {self.steps}: reporting to ringlab stopped: {e}")

    def _flush(self, timeout_s: float) -> None:
        client = self._client
        if client is None:
            return
        try:
            client.flush(timeout_s)
        except ReportingError as e:
            warn(f"rank {self.rank}: {e}")

    def _begin(self, batch_size: Optional[int] = None) -> None:
        """RunBegin, then whatever happened before it, in order."""
        inputs = dict(self._job_inputs)
        if inputs["batch_size"] is None:
            inputs["batch_size"] = batch_size
        job = job_module.build_job(**inputs)
        # Under the lock: an event another thread sends meanwhile waits, and goes after these.
        with self._lock:
            if self._began:
                return
            self._began = True
            self._emit(self._event(EventKind.RUN_BEGIN, value=float(self.world), text=job_module.job_json(job)))
            for event in self._early:
                self._emit(event)
            self._early = []

    def _report_setup(self, ddp_model, demo) -> None:
        """What happened before watch(): DDP's broadcast of rank 0's parameters, the demo."""
        param_bytes = sum(p.numel() * p.element_size() for p in ddp_model.parameters())
        self._send(self._event(EventKind.COLLECTIVE_END, collective_id=self._next_collective_id(),
                               bytes=param_bytes, text="broadcast"))
        if demo is None:
            return
        before, after = (self._as_floats(x) for x in demo)
        cid = self._next_collective_id()
        for kind, values in ((EventKind.COLLECTIVE_BEGIN, before), (EventKind.COLLECTIVE_END, after)):
            self._send(self._event(kind, collective_id=cid, bytes=4 * len(values), text="demo", values=values))

    def _send_final_parameters(self) -> None:
        model = getattr(self.ddp_model, "module", self.ddp_model)
        with self._torch.no_grad():
            flat = [float(v) for p in model.parameters() for v in p.detach().reshape(-1).tolist()]
        head = dict(step=self.steps)
        self._send_in_pieces(EventKind.FINAL_PARAMETERS, flat, "values", head)

    def _send_in_pieces(self, kind: EventKind, items: Sequence, field: str, head: Dict[str, Any]) -> None:
        """`items` whole, or in pieces of PIECE_ELEMENTS: each piece's `bytes` holds the whole
        payload's length and `segment` where the piece starts (engine/events/rank_events.h)."""
        whole = len(items) <= wire.PIECE_ELEMENTS
        at = 0
        while at == 0 or at < len(items):
            piece = dict(head)
            if not whole:
                piece.update(bytes=len(items), segment=at)
            piece[field] = list(items[at:at + wire.PIECE_ELEMENTS])
            self._send(self._event(kind, **piece))
            at += wire.PIECE_ELEMENTS

    @staticmethod
    def _as_floats(x) -> list:
        if hasattr(x, "detach"):
            return [float(v) for v in x.detach().reshape(-1).tolist()]
        return [float(v) for v in x]

    @staticmethod
    def _loss_value(loss) -> float:
        if loss is None:
            return 0.0
        if hasattr(loss, "detach"):
            return float(loss.detach().item())
        return float(loss)

    def _next_collective_id(self) -> int:
        with self._lock:
            cid = self._collective_id
            self._collective_id += 1
            return cid

    # The sampler.

    def _wrap_set_epoch(self, sampler) -> None:
        original = sampler.set_epoch

        def set_epoch(epoch):
            original(epoch)
            self._on_epoch(int(epoch))
        sampler.set_epoch = set_epoch

    def _on_epoch(self, epoch: int) -> None:
        with self._lock:
            # Asked twice for the same epoch with no step between (watcher.set_epoch and
            # sampler.set_epoch both): one epoch, one shard.
            if self._shard_epoch == (epoch, self.steps):
                return
            self._shard_epoch = (epoch, self.steps)
            self.epoch = epoch
        self._send_shard()

    def _send_shard(self) -> None:
        shard = [int(i) for i in iter(self.sampler)]
        self._send_in_pieces(EventKind.SAMPLER_SHARD, shard, "indices", dict(step=self.steps, epoch=self.epoch))

    # The model: forward, backward, the step's beginning.

    def _before_forward(self, module, inputs) -> None:
        if not self._torch.is_grad_enabled():
            return  # an evaluation, not a training step
        t = now_ns()
        with self._lock:
            opening = self._step_open_ns == 0
            if opening:
                self._step_open_ns = t
            self._forward_ns = t
            need_shard = self.sampler is not None and self._shard_epoch is None
            if need_shard:
                self._shard_epoch = (self.epoch, self.steps)
        if not self._began:
            self._begin(self._batch_size_of(inputs))
        if need_shard:
            self.log("sampler.set_epoch was not called before the first step: every epoch repeats this order")
            self._send_shard()
        if opening:
            self._send(self._event(EventKind.STEP_BEGIN, step=self.steps, epoch=self.epoch, t_begin_ns=t, t_end_ns=t))

    def _after_forward(self, module, inputs, output) -> None:
        if not self._forward_ns:
            return
        t0, self._forward_ns = self._forward_ns, 0
        self._send(self._event(EventKind.FORWARD, step=self.steps, epoch=self.epoch, t_begin_ns=t0, t_end_ns=now_ns()))
        tensor = self._first_tensor_with_grad(output)
        if tensor is not None:
            tensor.register_hook(self._on_output_grad)

    def _on_output_grad(self, grad) -> None:
        """Backward has reached the model's output: its own backward begins now."""
        t0 = now_ns()
        step, epoch = self.steps, self.epoch
        engine = self._torch.autograd.Variable._execution_engine

        def after_backward():
            self._send(self._event(EventKind.BACKWARD, step=step, epoch=epoch, t_begin_ns=t0, t_end_ns=now_ns()))

        # Callbacks run when the backward pass is over, in the order they were queued. DDP
        # queues its own (waiting for the buckets' all-reduces, copying the averaged gradients
        # back) when its first gradient is ready, after this one; queueing from inside this
        # callback puts the end of Backward after DDP's finish, as in a ringlab worker.
        engine.queue_callback(lambda: engine.queue_callback(after_backward))

    @staticmethod
    def _batch_size_of(inputs) -> Optional[int]:
        for x in inputs:
            shape = getattr(x, "shape", None)
            if shape is not None and len(shape) > 0:
                return int(shape[0])
        return None

    def _first_tensor_with_grad(self, output):
        if isinstance(output, self._torch.Tensor):
            return output if output.requires_grad else None
        if isinstance(output, (list, tuple)):
            for item in output:
                found = self._first_tensor_with_grad(item)
                if found is not None:
                    return found
        if isinstance(output, dict):
            return self._first_tensor_with_grad(list(output.values()))
        return None

    # The optimizer.

    def _wrap_optimizer_step(self, optimizer) -> None:
        original = optimizer.step
        watcher = self

        def step(opt, *args, **kwargs):
            t0 = now_ns()
            result = original(*args, **kwargs)
            watcher._send(watcher._event(EventKind.OPTIMIZER_STEP, step=watcher.steps, epoch=watcher.epoch,
                                         t_begin_ns=t0, t_end_ns=now_ns()))
            return result
        # A bound method, as before: LR schedulers wrap optimizer.step through __func__/__self__.
        optimizer.step = types.MethodType(step, optimizer)

    # DDP's buckets.

    def _register_comm_hook(self, ddp_model) -> None:
        try:
            ddp_model.register_comm_hook(state=None, hook=self._comm_hook)
        except Exception as e:  # DDP takes one hook, registered before training
            warn(f"rank {self.rank}: DDP's buckets will not be drawn: register_comm_hook failed: {e}")

    def _comm_hook(self, state, bucket):
        buffer = bucket.buffer()
        step, epoch = self.steps, self.epoch
        index = bucket.index()
        nbytes = buffer.numel() * buffer.element_size()
        # value: how many parameters (tensors) the bucket holds
        self._send(self._event(EventKind.BUCKET_READY, step=step, epoch=epoch, bucket=index, bytes=nbytes,
                               value=float(len(bucket.parameters()))))
        cid = self._next_collective_id()
        label = "ring" if self.teaching else "native"
        # Averaging by scaling first, then summing: what DDP does without a hook (each gradient
        # times 1/world_size as it is copied into the bucket), so the sum is the mean.
        buffer.div_(self.world)
        t0 = now_ns()
        self._send(self._collective_event(EventKind.COLLECTIVE_BEGIN, cid, index, buffer, label, step, t0))
        if self.teaching:
            return self._ring_in_hook(buffer, cid, index, label, step, t0)
        future = self._dist.all_reduce(buffer, group=self._group, async_op=True).get_future()

        def done(fut):
            reduced = fut.value()[0]
            self._send(self._collective_event(EventKind.COLLECTIVE_END, cid, index, reduced, label, step, t0))
            return reduced
        self._callbacks.add(done)
        return future.then(done)

    def _ring_in_hook(self, buffer, cid, index, label, step, t0):
        from .ring import ring_all_reduce
        record_values = buffer.numel() <= MAX_RECORDED_VALUES

        def on_chunk(c):
            self._send(self._event(
                EventKind.CHUNK_TRANSFER, step=step, epoch=self.epoch, collective_id=cid, bucket=index,
                phase=int(c.phase), ring_step=c.ring_step, chunk=c.chunk, segment=0, src=c.src, dst=c.dst,
                bytes=c.elements * buffer.element_size(), t_begin_ns=c.t_posted_ns, t_end_ns=c.t_done_ns,
                values=[float(v) for v in c.values.tolist()] if record_values else []))
        ring_all_reduce(buffer, group=self._group, collective_id=cid, timeout=self._timeout, on_chunk=on_chunk,
                        context=f"rank {self.rank}: step {step}: bucket {index}: ")
        self._send(self._collective_event(EventKind.COLLECTIVE_END, cid, index, buffer, label, step, t0))
        future = self._torch.futures.Future()
        future.set_result(buffer)
        return future

    def _collective_event(self, kind, cid, index, tensor, label, step, t0) -> Event:
        values = [float(v) for v in tensor.tolist()] if tensor.numel() <= MAX_RECORDED_VALUES else []
        return self._event(kind, step=step, epoch=self.epoch, collective_id=cid, bucket=index,
                           bytes=tensor.numel() * tensor.element_size(), text=label, values=values,
                           t_begin_ns=t0, t_end_ns=now_ns())


def install_exit_reporting(watcher: Watcher) -> None:
    """An uncaught exception becomes an Error event, SIGTERM a TornDown one, the exit a RunEnd."""
    previous_hook = sys.excepthook

    def excepthook(exc_type, exc, tb):
        try:
            watcher.report_error(exc)
        finally:
            previous_hook(exc_type, exc, tb)
    sys.excepthook = excepthook
    atexit.register(watcher.close)
    report_sigterm(watcher)


def report_sigterm(watcher: Watcher) -> None:
    """When the controller takes the group down (another rank failed, or the run was stopped) it
    sends SIGTERM; this rank then says so (TornDown) and exits 143, as a ringlab worker does.

    A Python signal handler runs only when the main thread comes back to Python code, and a rank
    whose peer died sits in a C++ collective wait, perhaps for the whole timeout. But the
    interpreter's own C-level handler, which runs on whatever thread the signal lands on, writes
    the signal's number to the "wakeup fd": a thread of ours reads it and reports at once.
    Left alone when the script has its own SIGTERM handler or wakeup fd (asyncio, say)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:
        previous = None
    if previous != -1:
        if previous is not None:
            signal.set_wakeup_fd(previous)
        os.close(read_fd)
        os.close(write_fd)
        return

    def torn_down(*_):
        watcher.report_torn_down()
        os._exit(128 + signal.SIGTERM)

    def wait_for_sigterm():
        while True:
            if signal.SIGTERM in os.read(read_fd, 64):
                torn_down()
    signal.signal(signal.SIGTERM, torn_down)  # installs the C-level handler; runs if main gets there first
    threading.Thread(target=wait_for_sigterm, name="ringlab SIGTERM reporter", daemon=True).start()
