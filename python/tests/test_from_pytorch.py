"""PyTorch -> staticformer: models trained a few steps in PyTorch, in the layouts users have,
converted with the command line (python3 -m staticformer convert), run by staticformer-run; the
logits must equal PyTorch's within float32 rounding.

    /usr/bin/python3 python/tests/test_from_pytorch.py --runner build/tools/staticformer-run [-v]

Each case trains its source module 30 AdamW steps on tiny-shakespeare in float32, saves it the way
its project does (nanoGPT: ckpt.pt with model_args; Hugging Face: a directory with config.json and
pytorch_model.bin or model.safetensors), converts, runs staticformer-run on B rows of T tokens
(the shapes of a configuration staticformer-run has compiled in) and compares its logits with the
source module's. Printed per case: the largest |staticformer - PyTorch float32| and, for scale,
|PyTorch float32 - PyTorch float64| of the same module. Bound: the first must stay within 4x the
second (and 1e-4 absolute); both are float32 rounding.
"""
import argparse
import json
import os
import sys
import tempfile
import unittest

import torch

from common import cli, corpus_ids, eval_tokens, max_abs, run_staticformer, sf, train_steps
from reference_models import HFGPT2, HFLlama, Llama2c, NanoGPT

RUNNER = None
RESULTS = []


def compare(test, name, module, converted_path, tokens, workdir):
    """staticformer-run's logits of the converted file against the module's, float32 and float64."""
    logits_sf, loss_sf = run_staticformer(RUNNER, converted_path, tokens, workdir, name)
    with torch.no_grad():
        pt32 = module(tokens)
        pt64 = module.double()(tokens)
    module.float()
    d = max_abs(logits_sf, pt32)
    scale = max_abs(pt32, pt64)
    d64 = max_abs(logits_sf, pt64)
    mag = float(pt64.abs().max())
    RESULTS.append((name, d, scale, d64, mag))
    print(f"  {name:34s} max|staticformer - torch f32| = {d:.2e}   max|torch f32 - torch f64| = {scale:.2e}   "
          f"max|staticformer - torch f64| = {d64:.2e}   (max|logit| {mag:.1f})", file=sys.stderr)
    test.assertLessEqual(d, max(4 * scale, 1e-6), f"{name}: staticformer-run's logits differ by {d}")
    test.assertLessEqual(d, 1e-4)
    # the loss staticformer-run reports is the loss of those logits
    targets = torch.cat([tokens[:, 1:], torch.full((tokens.shape[0], 1), -1)], dim=1)
    loss64 = sf.loss_fn(pt64, targets).item()
    print(f"  {'':34s} loss: staticformer-run {loss_sf:.6f}, torch f64 {loss64:.6f} (|difference| {abs(loss_sf - loss64):.1e})",
          file=sys.stderr)
    test.assertAlmostEqual(loss_sf, loss64, delta=1e-5)


class FromPyTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        torch.set_num_threads(1)
        cls.ids = corpus_ids()
        cls.tmp = tempfile.TemporaryDirectory(prefix="sf-from-pytorch-")
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def convert(self, *args):
        rc, out, err = cli("convert", *args)
        self.assertEqual(rc, 0, err)
        return out

    def test_nanogpt_ckpt(self):
        """nanoGPT (nn.Linear [out, in], fused c_attn), ref-gpt2's shapes: nanoGPT's ckpt.pt."""
        args = dict(block_size=16, vocab_size=65, n_layer=2, n_head=4, n_embd=32, bias=True, dropout=0.0)
        # nanoGPT's nn.GELU() is erf GELU; staticformer-run's learned-position configs are gelu_tanh,
        # so this copy uses GELU(approximate="tanh") and is converted with --activation gelu_tanh
        # (test_package.py checks the erf form, converted to activation gelu, against PyTorch).
        model = NanoGPT(**args, gelu_approximate="tanh")
        losses = train_steps(model, self.ids, 16)
        self.assertLess(losses[-1], losses[0])
        ckpt = self.path("ckpt.pt")
        torch.save({"model": model.state_dict(), "model_args": args, "iter_num": 30}, ckpt)
        out = self.convert("--from", "nanogpt", ckpt, self.path("nanogpt.safetensors"), "--activation", "gelu_tanh")
        self.assertIn("'ref-gpt2'", out)
        compare(self, "nanogpt ckpt.pt (ref-gpt2)", model, self.path("nanogpt.safetensors"),
                eval_tokens(self.ids, 2, 16), self.dir)

    def test_hf_gpt2_dir(self):
        """Hugging Face GPT-2 (Conv1D [in, out]), nano's shapes: a directory with config.json + pytorch_model.bin."""
        config = dict(model_type="gpt2", vocab_size=65, n_positions=64, n_embd=64, n_layer=2, n_head=4,
                      n_inner=None, activation_function="gelu_new", layer_norm_epsilon=1e-5,
                      tie_word_embeddings=True)
        model = HFGPT2(config)
        losses = train_steps(model, self.ids, 64)
        self.assertLess(losses[-1], losses[0])
        d = self.path("hf-gpt2")
        os.makedirs(d)
        torch.save(model.state_dict(), os.path.join(d, "pytorch_model.bin"))
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f)
        out = self.convert("--from", "hf-gpt2", d, self.path("hf-gpt2.safetensors"))
        self.assertIn("'nano'", out)
        compare(self, "hf-gpt2 directory (nano)", model, self.path("hf-gpt2.safetensors"),
                eval_tokens(self.ids, 4, 64), self.dir)

    def test_hf_llama_style_safetensors(self):
        """LLaMA-style (q/k/v/o_proj, RMSNorm, rotate-half RoPE, plain up/down MLP), ref-llama's
        shapes: model.safetensors (written by hand) + --config config.json."""
        config = dict(vocab_size=96, hidden_size=48, intermediate_size=96, num_hidden_layers=3,
                      num_attention_heads=6, num_key_value_heads=6, max_position_embeddings=24,
                      rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act="relu", tie_word_embeddings=False,
                      attention_bias=False, mlp_bias=False)
        model = HFLlama(config, gated=False)
        losses = train_steps(model, self.ids, 24)
        self.assertLess(losses[-1], losses[0])
        st = self.path("llama.safetensors")
        sf.write_safetensors(st, [(k, v.numpy()) for k, v in model.state_dict().items()])
        cj = self.path("llama-config.json")
        with open(cj, "w") as f:
            json.dump(config, f)
        out = self.convert("--from", "hf-llama", st, self.path("llama-sf.safetensors"), "--config", cj)
        self.assertIn("'ref-llama'", out)
        compare(self, "hf-llama-style safetensors (ref-llama)", model, self.path("llama-sf.safetensors"),
                eval_tokens(self.ids, 3, 24), self.dir)

    def test_llama2c_ckpt_swiglu_gqa(self):
        """llama2.c's Transformer (SwiGLU, 6 heads sharing 2 key/value heads, RoPE on adjacent pairs), with
        ref-llama2's shapes and its head untied: llama2.c's ckpt.pt ({'model', 'model_args', ...})."""
        args = dict(dim=48, n_layers=2, n_heads=6, n_kv_heads=2, vocab_size=90, hidden_dim=100, norm_eps=1e-5,
                    max_seq_len=20)
        model = Llama2c(tied=False, **args)
        ids = self.ids % 90
        losses = train_steps(model, ids, 20)
        self.assertLess(losses[-1], losses[0])
        ckpt = self.path("llama2c-ckpt.pt")
        torch.save({"model": model.state_dict(), "model_args": dict(args, multiple_of=32, dropout=0.0),
                    "iter_num": 30, "config": {"learning_rate": 3e-3}}, ckpt)
        out = self.convert("--from", "llama2c", ckpt, self.path("llama2c.safetensors"))
        self.assertIn("'ref-llama2'", out)
        compare(self, "llama2.c ckpt.pt (ref-llama2)", model, self.path("llama2c.safetensors"),
                eval_tokens(ids, 2, 20), self.dir)

    def test_hf_llama_swiglu_gqa_dir(self):
        """LlamaForCausalLM's layout (gate/up/down_proj, num_key_value_heads 2 of 6, rotate-half RoPE),
        ref-llama2's shapes: a directory with config.json + model.safetensors."""
        config = dict(model_type="llama", vocab_size=90, hidden_size=48, intermediate_size=100, num_hidden_layers=2,
                      num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=20, rms_norm_eps=1e-5,
                      rope_theta=10000.0, hidden_act="silu", tie_word_embeddings=False)
        model = HFLlama(config, gated=True)
        ids = self.ids % 90
        losses = train_steps(model, ids, 20)
        self.assertLess(losses[-1], losses[0])
        d = self.path("hf-llama2")
        os.makedirs(d)
        sf.write_safetensors(os.path.join(d, "model.safetensors"), [(k, v.numpy()) for k, v in model.state_dict().items()])
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f)
        out = self.convert("--from", "hf-llama", d, self.path("hf-llama2.safetensors"))
        self.assertIn("'ref-llama2'", out)
        compare(self, "hf-llama directory (ref-llama2)", model, self.path("hf-llama2.safetensors"),
                eval_tokens(ids, 2, 20), self.dir)

    def test_staticformer_module_export(self):
        """A StaticformerLM trained in PyTorch, saved with .save(): staticformer-run's logits."""
        cfg, B = sf.REFERENCE_CONFIGS["ref-vaswani"]
        model = sf.StaticformerLM(cfg, seed=1)
        ids = self.ids % cfg.vocab
        losses = train_steps(model, ids, cfg.context)
        self.assertLess(losses[-1], losses[0])
        model.save(self.path("sf-module.safetensors"))
        compare(self, "StaticformerLM.save (ref-vaswani)", model, self.path("sf-module.safetensors"),
                eval_tokens(ids, B, cfg.context), self.dir)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", required=True, help="the staticformer-run program")
    args, rest = ap.parse_known_args()
    RUNNER = os.path.abspath(args.runner)
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False)
    if RESULTS:
        worst = max(RESULTS, key=lambda r: r[1])
        print(f"largest |staticformer - PyTorch| over {len(RESULTS)} models: {worst[1]:.2e} ({worst[0]})",
              file=sys.stderr)
    sys.exit(0 if prog.result.wasSuccessful() else 1)
