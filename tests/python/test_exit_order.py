"""The watcher lets go of the script's DDP model only after gloo's threads have dropped the comm
hook's callbacks. Freeing the model joins the process group's threads while holding the GIL; a
thread that still needs the GIL to drop a callback would never end (a hang at exit, seen on a
busy machine). Here a plain thread stands in for gloo's: it holds a callback for a while and then
drops it, under the GIL like gloo's."""
import os
import sys
import threading
import time
import unittest
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from ringlab_torch.watcher import Watcher  # noqa: E402


class Model:
    """Records when it is freed."""

    def __init__(self, log):
        self.log = log

    def __del__(self):
        self.log.append("model freed")


def bare_watcher(log):
    """A watcher with only what _let_go_of_the_script touches."""
    watcher = Watcher.__new__(Watcher)
    watcher.rank = 0
    watcher.ddp_model = Model(log)
    watcher.sampler = None
    watcher._group = None
    watcher._job_inputs = {}
    watcher._callbacks = weakref.WeakSet()
    return watcher


class FreeingTheModelWaitsForTheCallbacks(unittest.TestCase):
    def test_the_model_is_freed_after_the_last_callback(self):
        log = []
        watcher = bare_watcher(log)

        def callback(fut):
            return fut

        watcher._callbacks.add(callback)
        held = [callback]
        del callback

        def gloo_thread():
            time.sleep(0.2)
            log.append("callback dropped")
            held.clear()

        thread = threading.Thread(target=gloo_thread)
        thread.start()
        watcher._let_go_of_the_script()
        thread.join(5)
        self.assertEqual(log, ["callback dropped", "model freed"])

    def test_no_callbacks_frees_at_once(self):
        log = []
        watcher = bare_watcher(log)
        watcher._let_go_of_the_script()
        self.assertEqual(log, ["model freed"])


if __name__ == "__main__":
    unittest.main()
