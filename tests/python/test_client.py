"""The event client against a fake event server: the handshake's answers, the clock offset, and
that a controller that stops reading is waited on for a bounded time only."""
import os
import socket
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from fake_event_server import FakeEventServer  # noqa: E402
from ringlab_torch import wire  # noqa: E402
from ringlab_torch.client import EventClient, ReportingError  # noqa: E402

THREE_HOURS_NS = 3 * 3600 * 1_000_000_000


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class Handshake(unittest.TestCase):
    def test_events_arrive_in_order(self):
        server = FakeEventServer(token="abc")
        client = EventClient(server.host, server.port, "abc", 5, timeout_s=5)
        for step in range(100):
            client.emit(wire.Event(kind=wire.EventKind.STEP_END, rank=5, step=step, value=step / 2))
        client.close(5)
        server.wait_for(lambda: len(server.events) == 100, 5)
        server.close()
        self.assertEqual(server.hellos, [(3, "abc", 5)])
        self.assertEqual([e.step for _, e in server.events], list(range(100)))
        self.assertEqual(client.clock_offset_ns, 0)  # one machine, one clock: timestamps untouched

    def test_a_wrong_token_is_refused_with_a_reason(self):
        server = FakeEventServer(token="right")
        with self.assertRaises(ReportingError) as caught:
            EventClient(server.host, server.port, "wrong", 0, timeout_s=5)
        server.close()
        self.assertIn("refused the token", str(caught.exception))

    def test_nobody_listening_fails_within_the_timeout(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # closed again: nothing listens there
        t0 = time.monotonic()
        with self.assertRaises(ReportingError) as caught:
            EventClient("127.0.0.1", port, "t", 0, timeout_s=0.5)
        self.assertLess(time.monotonic() - t0, 3)
        self.assertIn(f"127.0.0.1:{port}", str(caught.exception))

    def test_a_server_on_another_clock_moves_the_timestamps(self):
        server = FakeEventServer(token="t", clock_ahead_ns=THREE_HOURS_NS)
        client = EventClient(server.host, server.port, "t", 1, timeout_s=5)
        self.assertLess(abs(client.clock_offset_ns - THREE_HOURS_NS), 1_000_000_000)
        client.emit(wire.Event(kind=wire.EventKind.LOG, rank=1, t_begin_ns=1000, t_end_ns=2000))
        client.close(5)
        server.wait_for(lambda: len(server.events) == 1, 5)
        server.close()
        (_, event), = server.events
        self.assertEqual(event.t_begin_ns, 1000 + client.clock_offset_ns)
        self.assertEqual(event.t_end_ns - event.t_begin_ns, 1000)

    @unittest.skipUnless(has_ipv6_loopback(), "no IPv6 loopback here")
    def test_an_ipv6_server(self):
        server = FakeEventServer(token="t", host="::1")
        client = EventClient("::1", server.port, "t", 0, timeout_s=5)
        client.emit(wire.Event(kind=wire.EventKind.LOG, text="over v6"))
        client.close(5)
        server.wait_for(lambda: len(server.events) == 1, 5)
        server.close()
        self.assertEqual(server.events[0][1].text, "over v6")


class AControllerThatStopsReading(unittest.TestCase):
    def test_sends_and_a_full_queue_give_up_after_the_patience(self):
        server = FakeEventServer(token="t", read_events=False)
        client = EventClient(server.host, server.port, "t", 0, timeout_s=5, patience_s=0.5, capacity=2)
        big = [0.0] * wire.MAX_VALUES  # 4 MiB a frame: the socket's buffers fill after a few
        t0 = time.monotonic()
        with self.assertRaises(ReportingError) as caught:
            for _ in range(100):
                client.emit(wire.Event(kind=wire.EventKind.FINAL_PARAMETERS, values=big))
        self.assertLess(time.monotonic() - t0, 10)
        self.assertIn("controller", str(caught.exception))
        with self.assertRaises(ReportingError):
            client.close(0.5)
        server.close()


if __name__ == "__main__":
    unittest.main()
