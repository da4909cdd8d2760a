"""A ring step's error names the step as ringlab's reports do: from 1 within its phase."""
import os
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

import torch  # noqa: E402

from ringlab_torch import ring  # noqa: E402


class RingStepErrorWords(unittest.TestCase):
    def fail_at(self, failing_call: int) -> str:
        calls = []

        def one_step(*args, **kwargs):
            calls.append(args)
            if len(calls) == failing_call:
                raise ConnectionError("Connection closed by peer")
            return None

        with mock.patch.object(ring.dist, "get_world_size", return_value=3), \
                mock.patch.object(ring.dist, "get_rank", return_value=1), \
                mock.patch.object(ring, "_one_step", side_effect=one_step):
            with self.assertRaises(ring.RingStepError) as raised:
                ring.ring_all_reduce(torch.zeros(6), collective_id=6, context="rank 1: step 4: bucket 0: ")
        return str(raised.exception)

    def test_the_first_reduce_scatter_step_is_step_1_of_2(self):
        self.assertEqual(self.fail_at(1), "rank 1: step 4: bucket 0: ring all-reduce 6, reduce-scatter step 1 of 2: "
                                          "ConnectionError: Connection closed by peer")

    def test_the_last_all_gather_step_is_step_2_of_2(self):
        self.assertIn("all-gather step 2 of 2: ", self.fail_at(4))


if __name__ == "__main__":
    unittest.main()
