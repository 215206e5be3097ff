"""The Hugging Face Llama directories `staticformer convert ... --hf` writes, read by this package.

    /usr/bin/python3 python/tests/test_hf_directories.py --staticformer build/tools/staticformer [-v]

For test/data/hf's directories (transformers' own, with grouped-query attention and one key/value
head) and llama2.c's runc_gqa.v0.bin (adjacent RoPE pairs, written with Hugging Face's halves):
staticformer writes the directory; `convert --from hf-llama --rope-pairs halves` of this package
reads it; every tensor equals, bit for bit, the checkpoint `staticformer convert DIR -o M.safetensors`
writes of the same directory (the C++ reader), and the architecture agrees. Nothing is compiled.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from common import cli
from staticformer.safetensors import read_safetensors

STATICFORMER = None
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test", "data")


def staticformer(*args):
    r = subprocess.run([STATICFORMER, *args], capture_output=True, text=True)
    assert r.returncode == 0, f"staticformer {' '.join(args)}: {r.stderr}"


class WrittenDirectories(unittest.TestCase):
    def check(self, name, source, *flags):
        with tempfile.TemporaryDirectory(prefix="sf-hfw-") as d:
            out = os.path.join(d, name)
            staticformer("convert", source, *flags, "-o", out, "--hf")
            staticformer("convert", out, "-o", os.path.join(d, "cpp.safetensors"))
            rc, _, err = cli("convert", "--from", "hf-llama", "--rope-pairs", "halves", out, os.path.join(d, "py.safetensors"))
            self.assertEqual(rc, 0, err)
            a, ma = read_safetensors(os.path.join(d, "cpp.safetensors"))
            b, mb = read_safetensors(os.path.join(d, "py.safetensors"))
            self.assertEqual(sorted(a), sorted(b))
            for k in a:
                self.assertEqual(a[k].dtype, np.float32, k)
                self.assertTrue(np.array_equal(a[k].view(np.uint32), b[k].view(np.uint32)), f"{name}: {k}")
            for key in ("vocab", "context", "d_model", "n_heads", "n_kv_heads", "n_layers", "d_ff", "ffn", "tied",
                        "rope_pairs"):
                self.assertEqual(ma.get(key), mb.get(key), f"{name}: metadata {key}")
            for key in ("norm_eps", "rope_theta"):
                if key in ma or key in mb:
                    self.assertEqual(float(ma[key]), float(mb[key]), f"{name}: metadata {key}")
            print(f"  {name}: {len(a)} tensors, bit for bit", file=sys.stderr)

    def test_transformers_directories(self):
        for name in ("llama_gqa_f32", "llama_tied_bf16", "llama_mqa_f16"):
            self.check(name, os.path.join(DATA, "hf", name))

    def test_llama2c_file(self):
        self.check("runc_gqa", os.path.join(DATA, "llama2c", "runc_gqa.v0.bin"), "-z", os.path.join(DATA, "bpe", "tok512.bin"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--staticformer", required=True)
    a, rest = ap.parse_known_args()
    STATICFORMER = a.staticformer
    unittest.main(argv=[sys.argv[0]] + rest)
