"""ringlab_torch.watch on real 2-process gloo DDP jobs, reporting to a fake event server."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from fake_event_server import FakeEventServer  # noqa: E402
from ringlab_torch.wire import EventKind, ErrorCode, RingPhase  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

PYTHON = sys.executable
RANK_SCRIPT = os.path.join(HERE, "ddp_rank.py")
WORLD = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Job:
    """One small DDP job: WORLD rank processes reporting to their own fake server."""

    def __init__(self, *script_args, world=WORLD):
        self.server = FakeEventServer(token="t0ken")
        self.dir = tempfile.TemporaryDirectory()
        self.world = world
        port = free_port()
        self.procs = []
        for rank in range(world):
            env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                       LOCAL_WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       OMP_NUM_THREADS="1", RESULT_PATH=self.result_path(rank), **self.server.environ())
            self.procs.append(subprocess.Popen([PYTHON, RANK_SCRIPT, *script_args], env=env,
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))

    def result_path(self, rank):
        return os.path.join(self.dir.name, f"rank{rank}.json")

    def finish(self, timeout_s=90):
        self.outputs = [p.communicate(timeout=timeout_s) for p in self.procs]
        self.codes = [p.returncode for p in self.procs]
        self.server.wait_for(lambda: len(self.server.of_kind(EventKind.RUN_END)) +
                             len(self.server.of_kind(EventKind.ERROR)) >= self.world, 10)
        self.server.close()
        self.results = []
        for rank in range(self.world):
            if os.path.exists(self.result_path(rank)):
                with open(self.result_path(rank)) as f:
                    self.results.append(json.load(f))
        self.dir.cleanup()
        return self

    def events(self, kind, rank=None):
        return self.server.of_kind(kind, rank)


def bucket_events(job, kind, rank):
    return [e for e in job.events(kind, rank) if e.bucket >= 0]


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (python3-torch)")
class WatchedDdpJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Both jobs at once: the machine has two cores and each job waits on its sockets.
        default, teaching = Job(), Job("--teaching")
        cls.default, cls.teaching = default.finish(), teaching.finish()

    def check_ran(self, job):
        self.assertEqual(job.codes, [0] * WORLD, [err[-2000:] for _, err in job.outputs])
        self.assertEqual(job.server.errors, [])
        self.assertEqual(len(job.results), WORLD)

    def test_both_jobs_ran_and_said_hello(self):
        for job in (self.default, self.teaching):
            self.check_ran(job)
            self.assertEqual(sorted(h[2] for h in job.server.hellos), list(range(WORLD)))
            self.assertTrue(all(h[0] == 3 and h[1] == "t0ken" for h in job.server.hellos))

    def test_run_begin_comes_first_and_carries_the_job(self):
        for job in (self.default, self.teaching):
            for rank in range(WORLD):
                first = next(e for r, e in job.server.events if r == rank)
                self.assertEqual(first.kind, EventKind.RUN_BEGIN)
                self.assertEqual(first.value, WORLD)
                fields = json.loads(first.text)
                self.assertEqual(fields["world_size"], WORLD)
                self.assertEqual(fields["backend"], "gloo")
                self.assertEqual(fields["samples"], 20)
                self.assertEqual(fields["batch_size"], 4)
                self.assertEqual(fields["features"], 3)
                self.assertEqual(fields["hidden"], [4])
                self.assertEqual(fields["epochs"], 2)
                self.assertEqual(fields["seed"], 3)
                self.assertAlmostEqual(fields["lr"], 0.1)
        self.assertEqual(json.loads(self.default.events(EventKind.RUN_BEGIN)[0].text)["algorithm"], "native")
        self.assertEqual(json.loads(self.teaching.events(EventKind.RUN_BEGIN)[0].text)["algorithm"], "ring")

    def test_shards_equal_the_distributed_samplers(self):
        for job in (self.default, self.teaching):
            for rank in range(WORLD):
                shards = job.events(EventKind.SAMPLER_SHARD, rank)
                self.assertEqual([e.indices for e in shards], job.results[rank]["shards"])
                self.assertEqual([e.epoch for e in shards], [0, 1])

    def test_steps_carry_the_losses(self):
        for job in (self.default, self.teaching):
            for rank in range(WORLD):
                ends = job.events(EventKind.STEP_END, rank)
                self.assertEqual([e.step for e in ends], list(range(len(ends))))
                self.assertEqual([e.value for e in ends], job.results[rank]["losses"])
                begins = job.events(EventKind.STEP_BEGIN, rank)
                self.assertEqual([e.step for e in begins], [e.step for e in ends])
                for kind in (EventKind.FORWARD, EventKind.BACKWARD, EventKind.OPTIMIZER_STEP):
                    self.assertEqual(len(job.events(kind, rank)), len(ends), kind.name)

    def test_every_buckets_all_reduce_is_reported(self):
        for job in (self.default, self.teaching):
            steps = len(job.results[0]["losses"])
            for rank in range(WORLD):
                ready = job.events(EventKind.BUCKET_READY, rank)
                begins = bucket_events(job, EventKind.COLLECTIVE_BEGIN, rank)
                ends = bucket_events(job, EventKind.COLLECTIVE_END, rank)
                self.assertEqual(len(ready), len(begins))
                self.assertEqual([e.collective_id for e in begins], [e.collective_id for e in ends])
                for step in range(steps):
                    # every parameter tensor (4) is in exactly one bucket reduced at this step
                    in_step = [e for e in ready if e.step == step]
                    self.assertEqual(sum(e.value for e in in_step), 4.0)
                    self.assertEqual(sum(e.bytes for e in in_step), 21 * 4)
                # the averaged bucket is the plain DDP's averaged gradients (in bucket order)
                for end, plain in zip(ends, job.results[rank]["plain_grads"]):
                    self.assertEqual(sorted(end.values), sorted(plain))

    def test_gradients_equal_plain_ddps_in_both_modes(self):
        for job in (self.default, self.teaching):
            for rank in range(WORLD):
                self.assertEqual(job.results[rank]["grads"], job.results[rank]["plain_grads"])

    def test_teaching_chunks_end_as_the_averaged_gradients(self):
        job = self.teaching
        for rank in range(WORLD):
            chunks = job.events(EventKind.CHUNK_TRANSFER, rank)
            ends = {e.collective_id: e for e in bucket_events(job, EventKind.COLLECTIVE_END, rank)}
            self.assertEqual(len(chunks), 2 * (WORLD - 1) * len(ends))
            for cid, end in ends.items():
                mine = [c for c in chunks if c.collective_id == cid]
                # A ring step's chunk comes from the left neighbour.
                self.assertTrue(all(c.src == (rank - 1) % WORLD and c.dst == rank for c in mine))
                # After the last reduce-scatter step and each all-gather step the received chunk
                # is complete: together, in chunk order, they are the averaged bucket.
                last_rs = [c for c in mine if c.phase == RingPhase.REDUCE_SCATTER and c.ring_step == WORLD - 2]
                gathered = [c for c in mine if c.phase == RingPhase.ALL_GATHER]
                final = sorted(last_rs + gathered, key=lambda c: c.chunk)
                self.assertEqual([c.chunk for c in final], list(range(WORLD)))
                self.assertEqual([v for c in final for v in c.values], end.values)
                self.assertEqual(sum(c.bytes for c in final), end.bytes)
        # The default mode has no chunks to show.
        self.assertEqual(self.default.events(EventKind.CHUNK_TRANSFER), [])

    def test_the_run_ends_with_rank_0s_parameters_and_mse(self):
        for job in (self.default, self.teaching):
            steps = len(job.results[0]["losses"])
            for rank in range(WORLD):
                (end,) = job.events(EventKind.RUN_END, rank)
                self.assertEqual((end.step, end.text), (steps, "done"))
                self.assertGreater(end.value, 0.0)
            (params,) = job.events(EventKind.FINAL_PARAMETERS, 0)
            self.assertEqual(params.values, job.results[0]["final"])
            self.assertEqual(job.events(EventKind.FINAL_PARAMETERS, 1), [])
            self.assertEqual([e.epoch for e in job.events(EventKind.EPOCH_END, 0)], [0, 1])
            self.assertEqual(job.events(EventKind.EPOCH_END, 1), [])

    def test_the_watcher_lets_go_of_the_ddp_model_once_closed(self):
        # Held past close(), it would keep gloo's process group alive into Python's shutdown.
        for job in (self.default, self.teaching):
            self.assertEqual([r["ddp_freed_after_close"] for r in job.results], [True] * WORLD)


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed (python3-torch)")
class AFailingRank(unittest.TestCase):
    def test_an_uncaught_exception_is_an_error_event_with_its_step(self):
        job = Job("--fail-at-step", "1", world=1).finish()
        self.assertNotEqual(job.codes, [0])
        self.assertIn("a failure on purpose", job.outputs[0][1])  # the traceback is still printed
        (error,) = job.events(EventKind.ERROR)
        self.assertEqual(error.code, ErrorCode.OTHER)
        self.assertEqual(error.step, 1)
        self.assertTrue(error.text.startswith("rank 0: step 1: RuntimeError: a failure on purpose"), error.text)
        self.assertEqual(job.events(EventKind.RUN_END), [])


class ErrorWords(unittest.TestCase):
    def test_the_at_lines_of_a_callback_error_are_left_out(self):
        from ringlab_torch.watcher import error_words
        echo = RuntimeError("Got the following error when running the callback: RuntimeError: [pair.cc:598] "
                            "Connection closed by peer [127.0.0.1]:11928\n\nAt:\n  /x/watcher.py(504): done\n")
        self.assertEqual(error_words(echo), "Got the following error when running the callback: RuntimeError: "
                                            "[pair.cc:598] Connection closed by peer [127.0.0.1]:11928")
        self.assertEqual(error_words(ValueError("a bad batch\n")), "a bad batch")


if __name__ == "__main__":
    unittest.main()
