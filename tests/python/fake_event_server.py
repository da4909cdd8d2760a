"""A stand-in for ringlab's event server, for tests: it speaks protocol version 3 as
engine/net/event_server.cpp does (hello, one status byte, the server's clock) and keeps every
event it decodes, per connection, in arrival order."""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from ringlab_torch import wire  # noqa: E402


class FakeEventServer:
    def __init__(self, token="secret", *, clock_ahead_ns=0, host="127.0.0.1", read_events=True):
        self.token = token
        self.clock_ahead_ns = clock_ahead_ns
        self.read_events = read_events  # False: a controller that stopped reading (SIGSTOP)
        self.events = []       # (rank from the hello, Event), in arrival order
        self.hellos = []       # (version, token, rank)
        self.errors = []
        self._lock = threading.Lock()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, 0))
        self._listener.listen(16)
        self._listener.settimeout(0.2)
        self.host, self.port = host, self._listener.getsockname()[1]
        self._stopping = False
        self._threads = []
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._acceptor.start()

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def environ(self, **extra):
        env = {"RINGLAB_EVENT_ADDR": self.address, "RINGLAB_TOKEN": self.token, "RINGLAB_RUN_ID": "test"}
        env.update(extra)
        return env

    def close(self):
        self._stopping = True
        self._acceptor.join()
        for t in self._threads:
            t.join(timeout=5)
        self._listener.close()

    def of_kind(self, kind, rank=None):
        with self._lock:
            return [e for _, e in self.events if e.kind == kind and (rank is None or e.rank == rank)]

    def wait_for(self, predicate, timeout_s=20.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.02)
        return False

    def _accept_loop(self):
        while not self._stopping:
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn):
        buffer = bytearray()
        rank = None
        conn.settimeout(0.2)
        try:
            while True:
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    if self._stopping:
                        return
                    continue
                if not data:
                    return
                buffer += data
                for body in wire.split_frames(buffer):
                    if rank is None:
                        rank = self._answer_hello(conn, body)
                        if rank is None:
                            return
                        if not self.read_events:
                            self._wait_until_closed()
                            return
                        continue
                    event = wire.decode_event_body(body)
                    with self._lock:
                        self.events.append((rank, event))
        except Exception as e:  # noqa: BLE001 - a test reads them
            self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    def _wait_until_closed(self):
        while not self._stopping:
            time.sleep(0.05)

    def _answer_hello(self, conn, body):
        version, token, rank = wire.decode_hello_body(body)
        with self._lock:
            self.hellos.append((version, token, rank))
        if version != wire.VERSION:
            conn.sendall(bytes([wire.HelloStatus.WRONG_VERSION]))
            return None
        if token != self.token:
            conn.sendall(bytes([wire.HelloStatus.WRONG_TOKEN]))
            return None
        now = time.monotonic_ns() + self.clock_ahead_ns
        conn.sendall(bytes([wire.HelloStatus.ACCEPTED]) + wire.SERVER_CLOCK.pack(now))
        return rank
