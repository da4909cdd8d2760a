"""Against the real ringlab binary (skipped where build/app/ringlab is not built):
a ringlab worker's own event stream decodes with this package's codec, and `ringlab run --torch
examples/ddp_cpu.py` gives the report `ringlab run` gives (shards equal, epoch MSE within 1e-5)."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
RINGLAB = os.environ.get("RINGLAB_BINARY") or os.path.join(REPO, "build", "app", "ringlab")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

from fake_event_server import FakeEventServer  # noqa: E402
from ringlab_torch.wire import EventKind  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

HAVE_RINGLAB = os.access(RINGLAB, os.X_OK)


def ringlab_runs_torch_scripts():
    if not HAVE_RINGLAB:
        return False
    help_text = subprocess.run([RINGLAB, "run", "--help"], capture_output=True, text=True, timeout=30).stdout
    return "--torch" in help_text


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(HAVE_RINGLAB, f"{RINGLAB} is not built")
class ARinglabWorkersStream(unittest.TestCase):
    def test_decodes_with_this_codec(self):
        # Started by hand with an empty token, rank 0 hosts its own store (as torchrun's static
        # rendezvous), and both ranks report to the fake server.
        server = FakeEventServer(token="")
        port = free_port()
        procs = []
        for rank in range(2):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE="2",
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), **server.environ())
            procs.append(subprocess.Popen([RINGLAB, "worker", "-n", "2", "--epochs", "1", "--samples", "64",
                                           "--hidden", "4"], env=env))
        self.assertEqual([p.wait(timeout=60) for p in procs], [0, 0])
        server.wait_for(lambda: len(server.of_kind(EventKind.RUN_END)) == 2, 10)
        server.close()
        self.assertEqual(server.errors, [])
        begin = server.of_kind(EventKind.RUN_BEGIN, 0)[0]
        self.assertEqual(json.loads(begin.text)["samples"], 64)
        self.assertEqual([len(e.indices) for e in server.of_kind(EventKind.SAMPLER_SHARD)], [32, 32])
        self.assertEqual(len(server.of_kind(EventKind.STEP_END)), 2)
        chunks = server.of_kind(EventKind.CHUNK_TRANSFER, 0)
        self.assertTrue(chunks and all(c.src == 1 and c.dst == 0 for c in chunks))


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (python3-torch)")
@unittest.skipUnless(ringlab_runs_torch_scripts(), "this build of ringlab has no `run --torch`")
class RinglabRunsTheCourseScript(unittest.TestCase):
    def test_the_report_matches_ringlabs_own_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            torch_report, own_report = os.path.join(tmp, "torch.json"), os.path.join(tmp, "own.json")
            script = subprocess.run([RINGLAB, "run", "--torch", os.path.join(REPO, "examples", "ddp_cpu.py"),
                                     "-n", "2", "--report", torch_report], capture_output=True, text=True, timeout=180)
            self.assertEqual(script.returncode, 0, script.stderr[-3000:])
            own = subprocess.run([RINGLAB, "run", "-n", "2", "--report", own_report], capture_output=True,
                                 text=True, timeout=120)
            self.assertEqual(own.returncode, 0, own.stderr)
            with open(torch_report) as f:
                watched = json.load(f)
            with open(own_report) as f:
                reference = json.load(f)
        self.assertTrue(watched["ok"])
        self.assertEqual(watched["shards"], reference["shards"])
        self.assertEqual(len(watched["epoch_mse"]), 4)
        for a, b in zip(watched["epoch_mse"], reference["epoch_mse"]):
            self.assertAlmostEqual(a, b, delta=1e-5)
        for key in ("steps", "batches_per_epoch", "world_size", "samples", "batch_size", "lr", "seed", "epochs"):
            self.assertEqual(watched[key], reference[key], key)
        self.assertEqual(watched["allreduce_demo"], reference["allreduce_demo"])
        self.assertEqual([len(r) for r in watched["step_loss"]], [len(r) for r in reference["step_loss"]])
        self.assertEqual(len(watched["final_parameters"]), len(reference["final_parameters"]))
        self.assertGreater(watched["us_per_step"], 0)

    def test_a_failing_rank_is_named_with_its_step(self):
        env = dict(os.environ, RESULT_PATH=os.devnull)
        run = subprocess.run([RINGLAB, "run", "--torch", os.path.join(HERE, "ddp_rank.py"), "-n", "2",
                              "--timeout", "20", "--", "--fail-at-step", "1", "--fail-rank", "1"],
                             capture_output=True, text=True, timeout=180, env=env)
        self.assertNotEqual(run.returncode, 0)
        said = run.stdout + run.stderr
        self.assertIn("rank 1 failed", said)
        self.assertIn("first error: rank 1: step 1: RuntimeError: a failure on purpose", said)


if __name__ == "__main__":
    unittest.main()
