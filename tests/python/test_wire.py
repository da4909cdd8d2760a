"""The event protocol's bytes, against values worked out by hand from engine/net/event_codec.cpp."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from ringlab_torch import wire  # noqa: E402
from ringlab_torch.environment import parse_endpoint, read_environment  # noqa: E402


class HelloBytes(unittest.TestCase):
    def test_hello_is_magic_version_token_rank(self):
        got = wire.encode_hello("ab", 2)
        expected = bytes.fromhex(
            "10000000"    # body of 16 bytes
            "524c4556"    # "RLEV" (0x56454c52 little-endian)
            "0300"        # version 3
            "02000000"    # token length 2
            "6162"        # "ab"
            "02000000")   # rank 2
        self.assertEqual(got, expected)
        self.assertEqual(wire.decode_hello_body(got[4:]), (3, "ab", 2))

    def test_token_over_the_limit_is_refused(self):
        with self.assertRaises(wire.WireError):
            wire.encode_hello("x" * (wire.MAX_TOKEN_BYTES + 1), 0)


class EventBytes(unittest.TestCase):
    def test_an_empty_event_is_98_bytes_of_body(self):
        frame = wire.encode_event(wire.Event(kind=wire.EventKind.LOG))
        self.assertEqual(len(frame), 4 + 98)
        self.assertEqual(frame[:4], bytes.fromhex("62000000"))

    def test_every_field_in_order(self):
        e = wire.Event(kind=wire.EventKind.CHUNK_TRANSFER, rank=1, t_begin_ns=0x0102030405060708, t_end_ns=2,
                       step=3, epoch=4, collective_id=5, bucket=6, phase=1, ring_step=7, chunk=8, segment=-1,
                       src=0, dst=1, bytes=12, value=0.5, code=-1, values=[1.0, -2.0], indices=[9], text="hé")
        body = wire.encode_event(e)[4:]
        expected = bytes.fromhex(
            "08"                  # kind 8, ChunkTransfer
            "01000000"            # rank 1
            "0807060504030201"    # t_begin_ns, little-endian
            "0200000000000000"    # t_end_ns
            "0300000000000000"    # step
            "04000000"            # epoch
            "0500000000000000"    # collective_id
            "06000000"            # bucket
            "01"                  # phase: all-gather
            "07000000"            # ring_step
            "08000000"            # chunk
            "ffffffff"            # segment -1
            "00000000"            # src
            "01000000"            # dst
            "0c00000000000000"    # bytes 12
            "000000000000e03f"    # value 0.5 as a double
            "ffffffff"            # code -1
            "02000000" "0000803f" "000000c0"   # 2 values: 1.0f, -2.0f
            "01000000" "0900000000000000"      # 1 index: 9
            "03000000" "68c3a9")               # text "hé" in UTF-8: 3 bytes
        self.assertEqual(body, expected)

    def test_decode_gives_back_what_was_encoded(self):
        e = wire.Event(kind=wire.EventKind.SAMPLER_SHARD, rank=3, step=10, epoch=2, indices=list(range(100)),
                       bytes=100, segment=0, text="x")
        self.assertEqual(wire.decode_event_body(wire.encode_event(e)[4:]), e)

    def test_limits_are_checked_before_sending(self):
        with self.assertRaises(wire.WireError):
            wire.encode_event(wire.Event(kind=wire.EventKind.LOG, values=[0.0] * (wire.MAX_VALUES + 1)))

    def test_frames_split_where_their_lengths_say(self):
        a = wire.encode_event(wire.Event(kind=wire.EventKind.STEP_BEGIN, step=1))
        b = wire.encode_event(wire.Event(kind=wire.EventKind.STEP_END, step=1, value=0.25))
        buffer = bytearray(a + b[:10])
        self.assertEqual(len(wire.split_frames(buffer)), 1)
        buffer += b[10:]
        (body,) = wire.split_frames(buffer)
        self.assertEqual(wire.decode_event_body(body).value, 0.25)
        self.assertEqual(buffer, bytearray())

    def test_kind_numbers_match_event_h(self):
        self.assertEqual(wire.EventKind.RUN_BEGIN, 0)
        self.assertEqual(wire.EventKind.CHUNK_TRANSFER, 8)
        self.assertEqual(wire.EventKind.RUN_END, 15)
        self.assertEqual(wire.EventKind.FINAL_PARAMETERS, 18)
        self.assertEqual(wire.EventKind.COLLECTIVE_MISMATCH, 23)
        self.assertEqual(wire.EventKind.STEP_VOTE, 24)
        self.assertEqual(wire.EventKind.STRAGGLE, 25)


class ClockOffset(unittest.TestCase):
    # The cases of tests/unit/test_event_codec.cpp.
    def test_offsets_within_the_round_trip_are_zero(self):
        self.assertEqual(wire.clock_offset_ns(1000, 1200, 1400), 0)
        self.assertEqual(wire.clock_offset_ns(1000, 1500, 1400), 0)

    def test_offsets_beyond_it_are_kept(self):
        self.assertEqual(wire.clock_offset_ns(1000, 1700, 1400), 500)
        self.assertEqual(wire.clock_offset_ns(1000, 1200 - 401, 1400), -401)
        hours3 = 3 * 3600 * 1_000_000_000
        self.assertEqual(wire.clock_offset_ns(5_000_000, 5_080_000 + hours3, 5_160_000), hours3)


class Endpoints(unittest.TestCase):
    def test_spellings(self):
        self.assertEqual(parse_endpoint("127.0.0.1:29500", "x"), ("127.0.0.1", 29500))
        self.assertEqual(parse_endpoint("node7:1", "x"), ("node7", 1))
        self.assertEqual(parse_endpoint("[::1]:29500", "x"), ("::1", 29500))

    def test_bad_spellings_name_the_variable(self):
        for bad in ("nohost", ":29500", "::1:29500", "[::1]29500", "host:0", "host:65536", "host:port"):
            with self.assertRaises(ValueError) as caught:
                parse_endpoint(bad, "RINGLAB_EVENT_ADDR=" + bad)
            self.assertIn("RINGLAB_EVENT_ADDR", str(caught.exception))

    def test_no_address_means_not_started_by_ringlab(self):
        self.assertIsNone(read_environment({}))
        self.assertIsNone(read_environment({"RINGLAB_EVENT_ADDR": ""}))
        env = read_environment({"RINGLAB_EVENT_ADDR": "[::1]:7", "RINGLAB_TOKEN": "t", "RANK": "3"})
        self.assertEqual((env.host, env.port, env.token, env.rank), ("::1", 7, "t", 3))


if __name__ == "__main__":
    unittest.main()
