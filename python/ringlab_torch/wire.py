"""ringlab's event protocol, version 3, in Python: the bytes a ringlab worker sends its controller.

The C++ side is engine/net/event_codec.{h,cpp} (with engine/net/wire.h and engine/net/framing.*);
this module writes exactly the same bytes. Every field is little-endian and written explicitly:

    frame: u32 body length, then the body
    hello: u32 magic "RLEV", u16 version, u32 token length + token bytes, i32 rank
    event: u8 kind, i32 rank, i64 t_begin_ns, i64 t_end_ns, i64 step, i32 epoch,
           i64 collective_id, i32 bucket, i8 phase, i32 ring_step, i32 chunk, i32 segment,
           i32 src, i32 dst, i64 bytes, f64 value, i32 code,
           u32 n + n x f32 values, u32 n + n x i64 indices, u32 n + n bytes of UTF-8 text

The server answers a hello with one status byte (0 accepted, 1 wrong token, 2 wrong version) and,
when it accepts, an i64: its steady clock (CLOCK_MONOTONIC, in ns) when it answered.

Decoding is here too, for tests and for anyone who wants to read a stream back.
"""
import enum
import struct
from dataclasses import dataclass, field
from typing import List

MAGIC = 0x56454C52  # the bytes "RLEV" read as a little-endian u32
VERSION = 3

# The limits the controller's decoder enforces: an event past one is refused there, so it is
# refused here before it is sent (and long payloads travel in pieces, see PIECE_ELEMENTS).
MAX_VALUES = 1 << 20
MAX_INDICES = 4 << 20
MAX_TEXT_BYTES = 4 << 20
MAX_TOKEN_BYTES = 4096
MAX_FRAME_BYTES = 64 << 20
# A payload longer than this travels as several events of one kind (engine/events/event.h).
PIECE_ELEMENTS = 1 << 20

FRAME_HEADER = struct.Struct("<I")
HELLO_HEAD = struct.Struct("<IH")
# The fixed part of an event body: 86 bytes; with the three u32 counts, 98 as in the C++ codec.
# kind rank t_begin t_end step epoch collective_id bucket phase ring_step chunk segment src dst bytes value code
EVENT_HEAD = struct.Struct("<B i q q q i q i b i i i i i q d i".replace(" ", ""))
COUNT = struct.Struct("<I")
SERVER_CLOCK = struct.Struct("<q")


class EventKind(enum.IntEnum):
    """engine/events/event.h's EventKind, by number."""
    RUN_BEGIN = 0
    STEP_BEGIN = 1
    STEP_END = 2
    FORWARD = 3
    BACKWARD = 4
    BUCKET_READY = 5
    COLLECTIVE_BEGIN = 6
    COLLECTIVE_END = 7
    CHUNK_TRANSFER = 8
    OPTIMIZER_STEP = 9
    SAMPLER_SHARD = 10
    EPOCH_END = 11
    ERROR = 12
    LOG = 13
    GATE_WAIT = 14
    RUN_END = 15
    FLIGHT_RECORD = 16
    FAULT = 17
    FINAL_PARAMETERS = 18
    RUN_STOPPED = 19
    TORN_DOWN = 20
    RESTART = 21
    WORLD_CHANGE = 22
    COLLECTIVE_MISMATCH = 23
    STEP_VOTE = 24
    STRAGGLE = 25


class ErrorCode(enum.IntEnum):
    """What kind of error a rank raised (engine/events/event.h's ErrorCode)."""
    OTHER = 0
    TIMEOUT = 1
    PEER_CLOSED = 2
    COLLECTIVE_MISMATCH = 3
    BAD_INPUT = 4


class RingPhase(enum.IntEnum):
    NONE = -1
    REDUCE_SCATTER = 0
    ALL_GATHER = 1


class HelloStatus(enum.IntEnum):
    ACCEPTED = 0
    WRONG_TOKEN = 1
    WRONG_VERSION = 2


@dataclass
class Event:
    """One event, with the C++ Event's fields and defaults (-1 means "none")."""
    kind: int
    rank: int = 0
    t_begin_ns: int = 0
    t_end_ns: int = 0
    step: int = -1
    epoch: int = -1
    collective_id: int = -1
    bucket: int = -1
    phase: int = -1
    ring_step: int = -1
    chunk: int = -1
    segment: int = -1
    src: int = -1
    dst: int = -1
    bytes: int = 0
    value: float = 0.0
    code: int = -1
    values: List[float] = field(default_factory=list)
    indices: List[int] = field(default_factory=list)
    text: str = ""


class WireError(ValueError):
    """Bytes that are not a valid frame, or an event past a limit of the protocol."""


def frame(body: bytes) -> bytes:
    """A frame: the body's length as a u32, then the body."""
    return FRAME_HEADER.pack(len(body)) + body


def encode_hello(token: str, rank: int, version: int = VERSION) -> bytes:
    token_bytes = token.encode("utf-8")
    if len(token_bytes) > MAX_TOKEN_BYTES:
        raise WireError(f"token of {len(token_bytes)} bytes is longer than the limit of {MAX_TOKEN_BYTES}")
    body = HELLO_HEAD.pack(MAGIC, version) + COUNT.pack(len(token_bytes)) + token_bytes + struct.pack("<i", rank)
    return frame(body)


def _check_limit(event: Event, size: int, limit: int, what: str) -> None:
    if size > limit:
        name = EventKind(event.kind).name.lower()
        raise WireError(f"rank {event.rank}: step {event.step}: {name} event has {size} {what}, "
                        f"more than the wire limit of {limit}")


def encode_event(event: Event) -> bytes:
    """One whole frame (length + body) holding `event`."""
    text = event.text.encode("utf-8")
    _check_limit(event, len(event.values), MAX_VALUES, "values")
    _check_limit(event, len(event.indices), MAX_INDICES, "indices")
    _check_limit(event, len(text), MAX_TEXT_BYTES, "bytes of text")
    head = EVENT_HEAD.pack(
        int(event.kind), event.rank, event.t_begin_ns, event.t_end_ns, event.step, event.epoch,
        event.collective_id, event.bucket, event.phase, event.ring_step, event.chunk, event.segment,
        event.src, event.dst, event.bytes, float(event.value), event.code)
    parts = [head,
             COUNT.pack(len(event.values)), struct.pack(f"<{len(event.values)}f", *event.values),
             COUNT.pack(len(event.indices)), struct.pack(f"<{len(event.indices)}q", *event.indices),
             COUNT.pack(len(text)), text]
    return frame(b"".join(parts))


def clock_offset_ns(sent_ns: int, server_ns: int, read_ns: int) -> int:
    """How far the event server's clock is ahead of ours, from one hello's round trip.

    The server read its clock somewhere between our send (sent_ns) and our read of its answer
    (read_ns), so taking the middle is off by at most half the round trip. An offset no larger
    than the round trip cannot be told from zero, and is taken as zero: processes on one machine
    share CLOCK_MONOTONIC, and their timestamps must stay exactly as they are. (Same rule as
    event_codec::clock_offset_ns, whose integer division rounds towards zero.)
    """
    round_trip = read_ns - sent_ns
    half = abs(round_trip) // 2 * (1 if round_trip >= 0 else -1)
    offset = server_ns - (sent_ns + half)
    return offset if (offset > round_trip or offset < -round_trip) else 0


# Reading frames back (tests, tools). Everything is checked before it is used.

class _Reader:
    def __init__(self, data: bytes, what: str):
        self.data, self.pos, self.what = data, 0, what

    def take(self, size: int) -> bytes:
        if size > len(self.data) - self.pos:
            raise WireError(f"{self.what} truncated: needs {size} bytes at offset {self.pos}, "
                            f"only {len(self.data) - self.pos} left")
        piece = self.data[self.pos:self.pos + size]
        self.pos += size
        return piece

    def unpack(self, fmt: struct.Struct):
        return fmt.unpack(self.take(fmt.size))

    def count(self, limit: int, element_size: int, name: str) -> int:
        (n,) = self.unpack(COUNT)
        if n > limit:
            raise WireError(f"{self.what}: {name} has {n} elements, more than the limit of {limit}")
        if n * element_size > len(self.data) - self.pos:
            raise WireError(f"{self.what} truncated: {name} announces {n} elements")
        return n

    def expect_end(self) -> None:
        if self.pos != len(self.data):
            raise WireError(f"{self.what}: {len(self.data) - self.pos} unexpected bytes after the last field")


def decode_hello_body(body: bytes):
    """(version, token, rank) of a hello frame's body."""
    r = _Reader(body, "event stream hello")
    magic, version = r.unpack(HELLO_HEAD)
    if magic != MAGIC:
        raise WireError("not a ringlab event stream (wrong magic number)")
    token = r.take(r.count(MAX_TOKEN_BYTES, 1, "token")).decode("utf-8")
    (rank,) = struct.unpack("<i", r.take(4))
    r.expect_end()
    return version, token, rank


def decode_event_body(body: bytes) -> Event:
    r = _Reader(body, "event")
    fields = r.unpack(EVENT_HEAD)
    if fields[0] > max(EventKind):
        raise WireError(f"event: unknown kind {fields[0]}")
    event = Event(*fields)
    n = r.count(MAX_VALUES, 4, "values")
    event.values = list(struct.unpack(f"<{n}f", r.take(4 * n)))
    n = r.count(MAX_INDICES, 8, "indices")
    event.indices = list(struct.unpack(f"<{n}q", r.take(8 * n)))
    n = r.count(MAX_TEXT_BYTES, 1, "text")
    event.text = r.take(n).decode("utf-8")
    r.expect_end()
    return event


def split_frames(buffer: bytearray) -> List[bytes]:
    """Takes every complete frame off the front of `buffer`; returns their bodies."""
    bodies = []
    while len(buffer) >= FRAME_HEADER.size:
        (length,) = FRAME_HEADER.unpack_from(buffer)
        if length > MAX_FRAME_BYTES:
            raise WireError(f"a frame of {length} bytes, more than the limit of {MAX_FRAME_BYTES}")
        if len(buffer) < FRAME_HEADER.size + length:
            break
        bodies.append(bytes(buffer[FRAME_HEADER.size:FRAME_HEADER.size + length]))
        del buffer[:FRAME_HEADER.size + length]
    return bodies
