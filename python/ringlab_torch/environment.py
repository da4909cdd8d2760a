"""What ringlab puts in the environment of each rank it starts, read in one place.

`ringlab run --torch SCRIPT` starts SCRIPT once per rank with torchrun's variables (RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT: PyTorch's own rendezvous)
and three of its own:

    RINGLAB_EVENT_ADDR  where the controller's event server listens: "host:port", "[v6]:port"
    RINGLAB_TOKEN       the run's secret, presented in the hello
    RINGLAB_RUN_ID      the run's name (reported, not checked)

Without RINGLAB_EVENT_ADDR nobody listens, and ringlab_torch does nothing at all.
"""
import os
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

EVENT_ADDR = "RINGLAB_EVENT_ADDR"
TOKEN = "RINGLAB_TOKEN"
RUN_ID = "RINGLAB_RUN_ID"
# "1": ringlab asks for teaching mode (the app's Algorithm "ring", `ringlab run --torch --algorithm ring`).
TEACHING = "RINGLAB_TORCH_TEACHING"


@dataclass
class RinglabEnvironment:
    host: str
    port: int
    token: str
    run_id: str
    rank: Optional[int]        # RANK, when set (the process group's rank is what counts)
    world_size: Optional[int]  # WORLD_SIZE, when set
    teaching: bool = False     # ringlab asked for every bucket as a drawn ring


def parse_endpoint(text: str, what: str) -> Tuple[str, int]:
    """"127.0.0.1:29500", "node7:29500", "[::1]:29500" -> (host, port); brackets are dropped.

    The same spelling as engine/net/endpoint.h's parse_endpoint. Raises ValueError naming `what`.
    """
    if text.startswith("["):
        close = text.find("]")
        if close < 0 or text[close + 1:close + 2] != ":":
            raise ValueError(f"{what}: an IPv6 host goes in brackets before the port, as in [::1]:29500")
        host, port_text = text[1:close], text[close + 2:]
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            raise ValueError(f"{what}: expected host:port, as in 127.0.0.1:29500")
        if ":" in host:
            raise ValueError(f"{what}: an IPv6 host goes in brackets, as in [::1]:29500")
    if not host:
        raise ValueError(f"{what}: the host is empty")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"{what}: the port must be a number in 1..65535, got '{port_text}'")
    return host, int(port_text)


def _optional_int(env: Mapping[str, str], name: str) -> Optional[int]:
    text = env.get(name)
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name}={text} is not a whole number") from None


def read_environment(env: Mapping[str, str] = None) -> Optional[RinglabEnvironment]:
    """The ringlab settings of this process, or None when ringlab did not start it."""
    env = os.environ if env is None else env
    addr = env.get(EVENT_ADDR, "")
    if not addr:
        return None
    host, port = parse_endpoint(addr, f"{EVENT_ADDR}={addr}")
    return RinglabEnvironment(host=host, port=port, token=env.get(TOKEN, ""), run_id=env.get(RUN_ID, ""),
                              rank=_optional_int(env, "RANK"), world_size=_optional_int(env, "WORLD_SIZE"),
                              teaching=env.get(TEACHING, "") == "1")
