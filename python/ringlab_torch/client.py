"""The rank's end of the event stream: connect, say hello, then send events from a thread.

emit() only appends the event to a bounded in-memory queue; a background thread takes whatever
is queued, encodes it and writes it with one sendall(), so the training loop neither encodes nor
makes a system call per event, and waits on the socket only when the queue is full (the
controller has stopped reading), and then only for `patience` seconds. Every wait here has a
deadline: connecting, the handshake, a full queue, a stalled send, a flush.
"""
import collections
import socket
import sys
import threading
import time

from . import wire

# With nothing queued the sender looks again after this long; a new event wakes it sooner when
# a batch is full, a flush is asked for, or it has been idle.
_IDLE_WAIT_S = 0.05
# An event may wait this long to be batched with the ones after it.
_BATCH_WAIT_S = 0.002
_BATCH_EVENTS = 4096
_WRITE_CHUNK_BYTES = 256 * 1024
_CONNECT_RETRY_S = 0.1


class ReportingError(RuntimeError):
    """The events could not be delivered: the controller refused, left, or stopped reading."""


def _now_ns() -> int:
    # CLOCK_MONOTONIC, the clock ringlab's C++ steady_clock reads on Linux: events from the
    # script and from the controller land on one timeline.
    return time.monotonic_ns()


def connect(host: str, port: int, timeout_s: float) -> socket.socket:
    """A TCP connection to host:port, retried until `timeout_s` while nothing listens yet."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            sock = socket.create_connection((host, port), timeout=max(left, 0.01))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError as e:
            if time.monotonic() + _CONNECT_RETRY_S >= deadline:
                raise ReportingError(f"cannot connect to ringlab's event server at "
                                     f"{format_endpoint(host, port)} within {timeout_s:g} s: {e}") from e
            time.sleep(_CONNECT_RETRY_S)


def format_endpoint(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _read_exact(sock: socket.socket, size: int, where: str) -> bytes:
    data = b""
    while len(data) < size:
        piece = sock.recv(size - len(data))
        if not piece:
            raise ReportingError(f"event server at {where} closed the connection during the handshake")
        data += piece
    return data


def handshake(sock: socket.socket, token: str, rank: int, timeout_s: float, where: str) -> int:
    """Says hello; returns how far the server's clock is ahead of ours (0 on one machine)."""
    sock.settimeout(timeout_s)
    sent_ns = _now_ns()
    try:
        sock.sendall(wire.encode_hello(token, rank))
        status = _read_exact(sock, 1, where)[0]
        if status == wire.HelloStatus.WRONG_TOKEN:
            raise ReportingError(f"event server at {where} refused the token (RINGLAB_TOKEN)")
        if status == wire.HelloStatus.WRONG_VERSION:
            raise ReportingError(f"event server at {where} speaks another protocol version than {wire.VERSION}")
        if status != wire.HelloStatus.ACCEPTED:
            raise ReportingError(f"event server at {where} answered the handshake with code {status}")
        (server_ns,) = wire.SERVER_CLOCK.unpack(_read_exact(sock, wire.SERVER_CLOCK.size, where))
    except socket.timeout as e:
        raise ReportingError(f"event server at {where} did not answer the handshake within {timeout_s:g} s") from e
    except OSError as e:
        raise ReportingError(f"event server at {where} refused the connection: {e}") from e
    return wire.clock_offset_ns(sent_ns, server_ns, _now_ns())


class EventClient:
    """Sends events to ringlab's event server, in order, from a background thread."""

    def __init__(self, host: str, port: int, token: str, rank: int, *, timeout_s: float = 60.0,
                 patience_s: float = 600.0, capacity: int = 1 << 16):
        self.rank = rank
        self.where = format_endpoint(host, port)
        self.patience_s = patience_s
        self.capacity = max(1, capacity)
        self._sock = connect(host, port, timeout_s)
        try:
            self.clock_offset_ns = handshake(self._sock, token, rank, timeout_s, self.where)
        except BaseException:
            self._sock.close()
            raise
        self._sock.settimeout(patience_s)  # a send the controller does not read for this long fails
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._pending = collections.deque()
        self._enqueued = 0
        self._sent = 0
        self._flush_wanted = False
        self._closing = False
        self._failure = ""
        self._sender = threading.Thread(target=self._send_loop, name=f"ringlab rank {rank} events", daemon=True)
        self._sender.start()

    # The producer's side.

    def emit(self, event: wire.Event) -> None:
        """Queues `event`; waits at most `patience_s` for room. Raises ReportingError."""
        if self.clock_offset_ns:
            self._to_server_clock(event)
        with self._changed:
            self._raise_if_failed()
            if len(self._pending) >= self.capacity:
                self._changed.notify_all()
                if not self._changed.wait_for(lambda: len(self._pending) < self.capacity or self._failure,
                                              self.patience_s):
                    raise ReportingError(f"rank {self.rank}: the queue of events to {self.where} stayed full "
                                         f"({self.capacity} events) for {self.patience_s:g} s: the controller "
                                         f"is not reading them; is it suspended (Ctrl-Z, SIGSTOP)?")
                self._raise_if_failed()
            self._pending.append(event)
            self._enqueued += 1
            if len(self._pending) == 1 or len(self._pending) >= _BATCH_EVENTS:
                self._changed.notify_all()

    def flush(self, timeout_s: float = None) -> None:
        """Waits until every event emitted so far is written to the socket."""
        timeout_s = self.patience_s if timeout_s is None else timeout_s
        with self._changed:
            target = self._enqueued
            self._flush_wanted = True
            self._changed.notify_all()
            done = self._changed.wait_for(lambda: self._sent >= target or self._failure, timeout_s)
            self._raise_if_failed()
            if not done:
                raise ReportingError(f"rank {self.rank}: {target - self._sent} events were still unsent to "
                                     f"{self.where} after {timeout_s:g} s: the controller is not reading them")

    def close(self, timeout_s: float = None) -> None:
        """Flushes, stops the sender and closes the connection; raises what went wrong."""
        error = None
        try:
            self.flush(timeout_s)
        except ReportingError as e:
            error = e
            self._shutdown_socket()  # a sender stuck in sendall() fails now
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._sender.join(timeout=5.0)
        self._sock.close()
        if error:
            raise error

    @property
    def failed(self) -> str:
        with self._lock:
            return self._failure

    def _to_server_clock(self, event: wire.Event) -> None:
        if event.t_begin_ns:
            event.t_begin_ns += self.clock_offset_ns
        if event.t_end_ns:
            event.t_end_ns += self.clock_offset_ns

    def _raise_if_failed(self) -> None:
        if self._failure:
            raise ReportingError(f"rank {self.rank}: sending events to {self.where} failed: {self._failure}")

    def _shutdown_socket(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # The sender thread.

    def _send_loop(self) -> None:
        try:
            while True:
                batch = self._take_batch()
                if batch is None:
                    return
                self._write(batch)
                with self._changed:
                    self._sent += len(batch)
                    self._changed.notify_all()
        except Exception as e:  # the socket failed or an event broke a limit: report it to emit()
            with self._changed:
                self._failure = f"{type(e).__name__}: {e}"
                self._changed.notify_all()

    def _take_batch(self):
        """Waits for events, then takes all that are queued; None once closing with nothing left."""
        with self._changed:
            while not self._pending:
                if self._closing:
                    return None
                self._changed.wait(_IDLE_WAIT_S)
            # Let a burst of events (a step's dozen) gather, unless someone waits on us.
            if not (self._flush_wanted or self._closing or len(self._pending) >= self.capacity):
                self._changed.wait_for(lambda: self._flush_wanted or self._closing or
                                       len(self._pending) >= _BATCH_EVENTS, _BATCH_WAIT_S)
            self._flush_wanted = False
            batch = list(self._pending)
            self._pending.clear()
            self._changed.notify_all()  # room for a producer waiting on a full queue
            return batch

    def _write(self, batch) -> None:
        buffer = bytearray()
        for event in batch:
            buffer += wire.encode_event(event)
            if len(buffer) >= _WRITE_CHUNK_BYTES:
                self._sendall(buffer)
                buffer = bytearray()
        if buffer:
            self._sendall(buffer)

    def _sendall(self, buffer: bytearray) -> None:
        try:
            self._sock.sendall(buffer)
        except socket.timeout:
            raise ReportingError(f"the controller has not read any event for {self.patience_s:g} s; "
                                 f"is it suspended (Ctrl-Z, SIGSTOP)?") from None


def warn(message: str) -> None:
    """One line on stderr, said once by the caller: reporting failed, training goes on."""
    print(f"ringlab_torch: {message}", file=sys.stderr, flush=True)
