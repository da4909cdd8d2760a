"""Not started by ringlab (no RINGLAB_EVENT_ADDR): watch() does nothing, opens no socket, prints
nothing, and the course's script prints exactly what it prints without ringlab_torch."""
import contextlib
import io
import os
import socket
import subprocess
import sys
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))

import ringlab_torch  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def no_sockets(*args, **kwargs):
    raise AssertionError("ringlab_torch opened a socket although ringlab did not start this process")


# Runs a script with Python's sockets forbidden (PyTorch's own store and gloo are C++ and
# unaffected), as a world of one.
SOCKETLESS_RUNNER = (
    "import runpy, socket, sys\n"
    "class Refused(socket.socket):\n"  # a class still, for modules that subclass socket.socket
    "    def __init__(self, *a, **k): raise AssertionError('a Python socket was opened')\n"
    "socket.socket = Refused\n"
    "socket.create_connection = Refused\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n")


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

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (python3-torch)")
    def test_the_course_script_runs_alone_without_a_socket(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("RINGLAB_") and k not in
               ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
        env.update(PYTHONPATH=os.path.join(REPO, "python"), OMP_NUM_THREADS="1", MASTER_PORT=str(free_port()))
        run = subprocess.run([sys.executable, "-c", SOCKETLESS_RUNNER, os.path.join(REPO, "examples", "ddp_cpu.py")],
                             env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        self.assertEqual(run.stderr, "")
        # The seed's printed numbers at world size 1 (README.md, `ringlab run`).
        self.assertIn("all-reduce SUM (rank 0): [1.0, 2.0, 3.0] (sum over all ranks)\n", run.stdout)
        self.assertIn("batches per epoch      : 8 (256 samples / 32)\n", run.stdout)
        self.assertIn("epoch-0 indices, batch 1: [99, 70, 55, 138, 66, 19, 48, 54] ...\n", run.stdout)
        for line in ("epoch 1 done, MSE over the whole dataset: 0.900974",
                     "epoch 2 done, MSE over the whole dataset: 0.136688",
                     "epoch 3 done, MSE over the whole dataset: 0.065360",
                     "epoch 4 done, MSE over the whole dataset: 0.062745"):
            self.assertIn(line + "\n", run.stdout)


def free_port():
    real = socket.socket
    with real() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    unittest.main()
