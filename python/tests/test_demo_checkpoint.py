"""staticformer -> PyTorch: the demo's checkpoint (examples/train, nano on tiny-shakespeare) loaded
into PyTorch gives staticformer-run's logits.

    /usr/bin/python3 python/tests/test_demo_checkpoint.py --train build/examples/train \\
        --runner build/tools/staticformer-run --staticformer build/tools/staticformer [-v]

Trains 200 steps with examples/train (about a second), then:
  * staticformer.load(model.safetensors) -> StaticformerLM; its logits on 4 x 64 tokens of the corpus,
    encoded with the checkpoint's own tokenizer, against staticformer-run's on the same batch;
  * to-torch --to hf-gpt2: the Hugging Face GPT-2 module (Conv1D, gelu_new) loaded from that
    directory gives the same logits; convert --from hf-gpt2 back gives the same tensors, bit for bit;
  * to-torch (staticformer's .pt) and back: the same tensors and metadata;
  * `staticformer run --eval` (the mean loss of a text through the KV-cache decoder, in windows of
    T tokens that overlap by one) against PyTorch's cross-entropy over the same windows.
Printed: the largest |PyTorch - staticformer| of each, and PyTorch float32 - float64 for scale.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

from common import CORPUS, cli, max_abs, run_staticformer, sf
from reference_models import HFGPT2

TRAIN = RUNNER = STATICFORMER = None


class DemoCheckpoint(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.TemporaryDirectory(prefix="sf-demo-")
        cls.dir = cls.tmp.name
        r = subprocess.run([TRAIN, "--steps", "200", "--out", os.path.join(cls.dir, "run"), "--eval-batches", "4",
                            "--sample", "80", "--no-plot", "--seconds", "3600", "--seed", "3"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        print("  " + r.stdout.strip().splitlines()[-1], file=sys.stderr)
        cls.ckpt = os.path.join(cls.dir, "run", "model.safetensors")
        cls.model = sf.load(cls.ckpt)
        tok = sf.CharTokenizer.of(cls.model)
        with open(CORPUS, "rb") as f:
            text = f.read()[100000:100000 + 4 * 64]
        cls.tokens = torch.tensor(tok.encode(text)).reshape(4, 64)
        cls.sf_logits, cls.sf_loss = run_staticformer(RUNNER, cls.ckpt, cls.tokens, cls.dir, "demo")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, what, logits):
        d = max_abs(logits, self.sf_logits)
        print(f"  {what:44s} max|PyTorch - staticformer-run| = {d:.2e}", file=sys.stderr)
        return d

    def test_load_into_pytorch(self):
        self.assertEqual(self.model.config, sf.REFERENCE_CONFIGS["nano"][0])
        self.assertIn("tokenizer.vocab", self.model.metadata)
        with torch.no_grad():
            logits, loss = self.model(self.tokens, torch.cat([self.tokens[:, 1:], torch.full((4, 1), -1)], 1))
            l64 = self.model.double()(self.tokens)
        self.model.float()
        d = self.report("staticformer.load -> StaticformerLM", logits)
        scale = max_abs(logits, l64)
        print(f"  {'(PyTorch float32 - float64, for scale)':44s} {scale:.2e}; max|logit| "
              f"{float(l64.abs().max()):.1f}; loss {loss.item():.5f} (staticformer-run {self.sf_loss:.5f})",
              file=sys.stderr)
        self.assertLessEqual(d, max(4 * scale, 1e-6))
        self.assertLess(d, 1e-4)
        self.assertAlmostEqual(loss.item(), self.sf_loss, delta=1e-5)
        self.assertLess(loss.item(), 3.3)  # trained: below the unigram entropy of the text

    def test_hf_gpt2_layout(self):
        out = os.path.join(self.dir, "hf")
        rc, _, err = cli("to-torch", "--to", "hf-gpt2", self.ckpt, out)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(out, "config.json")) as f:
            config = json.load(f)
        self.assertEqual(config["activation_function"], "gelu_new")
        module = HFGPT2(config)
        missing, unexpected = module.load_state_dict(torch.load(os.path.join(out, "pytorch_model.bin")), strict=False)
        self.assertEqual(unexpected, [])
        self.assertTrue(all(k.endswith("attn.bias") or k.endswith("masked_bias") for k in missing), missing)
        module.eval()
        with torch.no_grad():
            d = self.report("to-torch --to hf-gpt2 -> GPT-2 module", module(self.tokens))
        self.assertLess(d, 1e-4)
        back = os.path.join(self.dir, "back.safetensors")
        rc, _, err = cli("convert", "--from", "hf-gpt2", out, back)
        self.assertEqual(rc, 0, err)
        a, _ = sf.read_safetensors(self.ckpt)
        b, _ = sf.read_safetensors(back)
        self.assertEqual(list(a), list(b))
        for k in a:
            self.assertTrue(np.array_equal(a[k], b[k]), k)

    def test_staticformer_pt_round_trip(self):
        pt, back = os.path.join(self.dir, "m.pt"), os.path.join(self.dir, "back2.safetensors")
        rc, _, err = cli("to-torch", self.ckpt, pt)
        self.assertEqual(rc, 0, err)
        d = torch.load(pt)
        m = sf.StaticformerLM(sf.Config.from_metadata(d["config"]))
        m.load_state_dict(d["model"])
        with torch.no_grad():
            self.assertLess(self.report("to-torch .pt -> StaticformerLM", m(self.tokens)), 1e-4)
        rc, _, err = cli("convert", "--from", "staticformer", pt, back)
        self.assertEqual(rc, 0, err)
        a, ma = sf.read_safetensors(self.ckpt)
        b, mb = sf.read_safetensors(back)
        self.assertEqual(ma, mb)
        for k in a:
            self.assertTrue(np.array_equal(a[k], b[k]), k)
        # and staticformer-run reads the round-tripped file the same
        logits, _ = run_staticformer(RUNNER, back, self.tokens, self.dir, "back2")
        self.assertTrue(np.array_equal(logits, self.sf_logits))

    def test_eval_loss(self):
        # 1000 characters of the corpus: windows of T = 64 tokens starting every 63, each predicting
        # the 63 after its first (the last window shorter): every token but the first predicted once.
        with open(CORPUS, "rb") as f:
            text = f.read()[200000:201000]
        path = os.path.join(self.dir, "eval.txt")
        with open(path, "wb") as f:
            f.write(text)
        r = subprocess.run([STATICFORMER, "run", self.ckpt, "--eval", path, "-q"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        m = re.search(r"loss ([0-9.]+) \(perplexity [0-9.]+\) over ([0-9]+) tokens predicted in windows of 64 "
                      r"\(float weights", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        ids = torch.tensor(sf.CharTokenizer.of(self.model).encode(text))
        T, total, n = 64, 0.0, 0
        with torch.no_grad():
            m64 = self.model.double()
            for start in range(0, len(ids) - 1, T - 1):
                x = ids[start:start + T]
                logits = m64(x[None])[0]
                total += torch.nn.functional.cross_entropy(logits[:-1], x[1:], reduction="sum").item()
                n += len(x) - 1
        self.model.float()
        print(f"  staticformer run --eval: loss {m.group(1)} over {m.group(2)} tokens; PyTorch float64 "
              f"{total / n:.6f} over {n}", file=sys.stderr)
        self.assertEqual(int(m.group(2)), n)
        self.assertEqual(n, len(text) - 1)
        self.assertAlmostEqual(float(m.group(1)), total / n, delta=1e-5)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True, help="the examples/train program")
    ap.add_argument("--runner", required=True, help="the staticformer-run program")
    ap.add_argument("--staticformer", required=True, help="the staticformer command")
    args, rest = ap.parse_known_args()
    TRAIN, RUNNER = os.path.abspath(args.train), os.path.abspath(args.runner)
    STATICFORMER = os.path.abspath(args.staticformer)
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False)
    sys.exit(0 if prog.result.wasSuccessful() else 1)
