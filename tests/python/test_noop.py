"""Not started by ringlab (no RINGLAB_EVENT_ADDR): watch() does nothing, opens no socket and
prints nothing (test_example.py runs the course's script that way, with Python's sockets forbidden)."""
import contextlib
import io
import os
import socket
import sys
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))

import ringlab_torch  # noqa: E402


def no_sockets(*args, **kwargs):
    raise AssertionError("ringlab_torch opened a socket although ringlab did not start this process")


class WithoutRinglab(unittest.TestCase):
    def test_watch_returns_a_watcher_that_does_nothing(self):
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(socket, "socket", no_sockets), \
                mock.patch.object(socket, "create_connection", no_sockets), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            model = object()  # not even looked at
            watcher = ringlab_torch.watch(model, sampler=object(), teaching=True, environ={})
            watcher.set_epoch(0)
            watcher.step(1.5)
            watcher.epoch_end(0.25)
            watcher.log("hello")
            watcher.close()
        self.assertFalse(watcher.enabled)
        self.assertIsInstance(watcher, ringlab_torch.NullWatcher)
        self.assertEqual((out.getvalue(), err.getvalue()), ("", ""))

    def test_an_empty_address_is_no_address(self):
        with mock.patch.object(socket, "socket", no_sockets):
            self.assertFalse(ringlab_torch.watch(object(), environ={"RINGLAB_EVENT_ADDR": ""}).enabled)

    def test_a_malformed_address_is_an_error_naming_it(self):
        with self.assertRaises(ValueError) as caught:
            ringlab_torch.watch(object(), environ={"RINGLAB_EVENT_ADDR": "no-port"})
        self.assertIn("RINGLAB_EVENT_ADDR=no-port", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
