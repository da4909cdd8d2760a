"""examples/ddp_cpu.py, run by hand as torchrun would run it (one process per rank) and so not
watched, prints what `ringlab run -n 2` prints: the same lines, the same four MSE values. Its
ranks run with Python's sockets forbidden: unwatched, ringlab_torch opens none."""
import os
import socket
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
RINGLAB = os.environ.get("RINGLAB_BINARY") or os.path.join(REPO, "build", "app", "ringlab")
EXAMPLE = os.path.join(REPO, "examples", "ddp_cpu.py")

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Runs a script with Python's sockets forbidden (PyTorch's own store and gloo are C++, unaffected).
SOCKETLESS_RUNNER = (
    "import runpy, socket, sys\n"
    "class Refused(socket.socket):\n"  # a class still, for modules that subclass socket.socket
    "    def __init__(self, *a, **k): raise AssertionError('a Python socket was opened')\n"
    "socket.socket = Refused\n"
    "socket.create_connection = Refused\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def run_example_by_hand(world):
    port = free_port()
    procs = []
    for rank in range(world):
        env = {k: v for k, v in os.environ.items() if not k.startswith("RINGLAB_")}
        env.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), LOCAL_WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                   PYTHONPATH=os.path.join(REPO, "python"))
        procs.append(subprocess.Popen([sys.executable, "-c", SOCKETLESS_RUNNER, EXAMPLE], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    return [p.communicate(timeout=120) + (p.returncode,) for p in procs]


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (python3-torch)")
@unittest.skipUnless(os.access(RINGLAB, os.X_OK), f"{RINGLAB} is not built")
class CourseScriptMatchesRinglab(unittest.TestCase):
    def test_two_ranks_print_what_ringlab_run_prints(self):
        ringlab = subprocess.run([RINGLAB, "run", "-n", "2"], capture_output=True, text=True, timeout=120)
        self.assertEqual(ringlab.returncode, 0, ringlab.stderr)
        (out0, err0, code0), (out1, err1, code1) = run_example_by_hand(2)
        self.assertEqual((code0, code1), (0, 0), err0[-2000:] + err1[-2000:])
        self.assertEqual((err0, err1), ("", ""))
        self.assertEqual(out0, ringlab.stdout)
        self.assertEqual(out1, "")  # only rank 0 speaks


if __name__ == "__main__":
    unittest.main()
