"""A SIGTERM from the controller (Ctrl-C on `ringlab run --torch`, or another rank failed) is
reported from a thread of the watcher's own, which then ends the process. Meanwhile the script's
main thread goes on: before, its epoch_end could send the epoch after the report (too late for
ringlab) and then print "epoch N done", so the script's output counted one epoch more than the
report. Now the events of other threads wait for the end."""
import os
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from ringlab_torch import watcher as watcher_module  # noqa: E402
from ringlab_torch.watcher import Watcher  # noqa: E402
from ringlab_torch.wire import EventKind  # noqa: E402


class SlowClient:
    """Records what was emitted; a flush takes a while, as it does over a busy socket."""

    def __init__(self):
        self.kinds = []

    def emit(self, event):
        self.kinds.append(event.kind)

    def flush(self, timeout_s):
        time.sleep(0.3)


def bare_watcher(client):
    watcher = Watcher.__new__(Watcher)
    watcher.rank = 0
    watcher.steps = 5
    watcher.epoch = 3
    watcher._train_ns = 0
    watcher._lock = threading.Lock()
    watcher._began = True
    watcher._early = []
    watcher._closed = False
    watcher._failed = False
    watcher._torn_down_by = None
    watcher._client = client
    watcher._begin = lambda *args: None
    return watcher


class EventsAfterATearDownWait(unittest.TestCase):
    def setUp(self):
        self.saved = watcher_module._ERROR_FLUSH_S, watcher_module._TORN_DOWN_EXIT_S
        watcher_module._ERROR_FLUSH_S, watcher_module._TORN_DOWN_EXIT_S = 0.5, 0.5

    def tearDown(self):
        watcher_module._ERROR_FLUSH_S, watcher_module._TORN_DOWN_EXIT_S = self.saved

    def test_an_epoch_ended_during_the_report_is_not_sent_after_it(self):
        client = SlowClient()
        watcher = bare_watcher(client)
        reporter = threading.Thread(target=watcher.report_torn_down)
        reporter.start()
        while watcher._torn_down_by is None:
            time.sleep(0.001)
        watcher.epoch_end(0.25)  # the script's main thread, while the report is being flushed
        reporter.join(5)
        # The epoch's event never went out behind the report (the process would have ended while
        # epoch_end waited, before the script printed its line).
        self.assertEqual(client.kinds, [int(EventKind.TORN_DOWN), int(EventKind.RUN_END)])

    def test_the_reporting_thread_itself_still_sends(self):
        client = SlowClient()
        watcher = bare_watcher(client)
        watcher.report_torn_down()
        self.assertEqual(client.kinds, [int(EventKind.TORN_DOWN), int(EventKind.RUN_END)])


if __name__ == "__main__":
    unittest.main()
