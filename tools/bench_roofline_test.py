"""Tests of tools/bench_roofline.py (the side-by-side scripts' memory roofline): standard library
only; CTest runs it (bench_roofline_test) where a Python 3 is found."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_roofline import bandwidths, round_shares, roofline, share_summary, weight_bytes  # noqa: E402

# Two rounds of a log as the scripts write it: the decoders' lines, then the round's "bw" lines.
LOG = """s15m float runc 300
s15m float sf 600
bw 59344 read_bandwidth 20.0
bw 59344 read_bandwidth_thp 36.45
bw 16700 read_bandwidth_thp 80.0
s15m float runc 250
s15m float sf 500
bw 59344 read_bandwidth 18.0
bw 59344 read_bandwidth_thp_mem 48.6
""".splitlines()


def parse(line):
    w = line.split()
    if len(w) == 4 and w[:2] == ["s15m", "float"]:
        return w[2], float(w[3])
    return None


class Roofline(unittest.TestCase):
    def test_weight_bytes(self):  # stories15M float: 60.75 MB a token (docs/benchmarks.md)
        self.assertAlmostEqual(weight_bytes("s15m") / 1e6, 60.75, places=2)
        # int8: every s15m matrix has an input width divisible by 32: 36 bytes a block of 32
        self.assertAlmostEqual(weight_bytes("s15m", 36), weight_bytes("s15m") / 4 / 32 * 36)

    def test_best_over_rounds_and_kernels(self):
        bw = bandwidths(LOG)
        self.assertEqual(bw[(59344, "read_bandwidth")], 20.0)  # the best of its rounds
        small, huge, peak = roofline(bw, 59344, weight_bytes("s15m"))
        self.assertEqual((small, huge), (20.0, 48.6))  # "_mem" counts as its page size says
        self.assertAlmostEqual(peak, 48.6e9 / weight_bytes("s15m"))
        self.assertIsNone(roofline(bw, 1016, 1.0))

    def test_round_shares(self):
        wb = weight_bytes("s15m")
        per = round_shares(LOG, parse, 59344, wb)
        # round 1: 600 tok/s against 36.45 GB/s; round 2: 500 against 48.6 (each round's own best)
        self.assertAlmostEqual(per["sf"][0], 600 / (36.45e9 / wb))
        self.assertAlmostEqual(per["sf"][1], 500 / (48.6e9 / wb))
        self.assertAlmostEqual(per["runc"][1], 250 / (48.6e9 / wb))
        self.assertEqual(len(per["sf"]), 2)
        self.assertEqual(round_shares(LOG, parse, 1016, wb), {})  # no bandwidth at that size
        self.assertIn("2 rounds", share_summary(per["sf"]))


if __name__ == "__main__":
    unittest.main()
