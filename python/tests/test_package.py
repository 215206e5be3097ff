"""The staticformer Python package without the C++ programs: the nn.Module against the committed
golden files, checkpoints both ways, every converter against its source module in float64, the
RoPE permutation, the refusals and the command line.

    /usr/bin/python3 python/tests/test_package.py [-v]
"""
import contextlib
import copy
import dataclasses
import io
import json
import os
import struct
import sys
import tempfile
import unittest

import numpy as np
import torch

from common import GOLDEN, cli, max_abs, sf
from reference_models import HFGPT2, HFLlama, Llama2c, NanoGPT

torch.set_num_threads(1)
CASES = [(c, p) for c in ("ref-gpt2", "ref-llama", "ref-vaswani", "nano") for p in ("none", "left", "right")]


def tokens_for(vocab, B, T, seed=0):
    return torch.randint(0, vocab, (B, T), generator=torch.Generator().manual_seed(seed))


def randomize(module, seed=0, std=0.3):
    """Every parameter random (norm gains around 1), so that each term of the model matters."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in module.named_parameters():
            base = 1.0 if (p.dim() == 1 and ("norm" in n or "ln_" in n or "layernorm" in n) and n.endswith("weight")) else 0.0
            p.copy_(base + std * torch.randn(p.shape, generator=gen))
    return module


# LlamaForCausalLM's own shape: SwiGLU, 6 heads sharing 2 key/value heads, RoPE base 500000 (LLaMA 3's)
LLAMA2 = dict(vocab_size=40, hidden_size=24, intermediate_size=40, num_hidden_layers=2, num_attention_heads=6,
              num_key_value_heads=2, max_position_embeddings=12, rms_norm_eps=1e-6, rope_theta=500000.0,
              hidden_act="silu", tie_word_embeddings=False)
# llama2.c's ModelArgs: 6 heads, 3 key/value heads
LLAMA2C = dict(dim=24, n_layers=2, n_heads=6, n_kv_heads=3, vocab_size=40, hidden_dim=36, norm_eps=1e-5, max_seq_len=12)
LLAMA = dict(vocab_size=40, hidden_size=24, intermediate_size=40, num_hidden_layers=2, num_attention_heads=3,
             num_key_value_heads=3, max_position_embeddings=12, rms_norm_eps=1e-6, rope_theta=10000.0,
             hidden_act="gelu_pytorch_tanh", tie_word_embeddings=False)


class GoldenFiles(unittest.TestCase):
    # The golden logits were computed by make_golden.py in float64 on one machine with one BLAS.
    # The same module on another BLAS (OpenBLAS, MKL) sums the products of its matrix products in
    # another order, so the float64 results differ in their last bits: measured up to 2.0e-15 of
    # max|logits| (OpenBLAS serial, Zen 5) and 3.1e-16 of the loss. 1e-12 relative is what float64
    # rounding meets with ~500x to spare while any real difference in the model (float32
    # rounding anywhere: ~1e-7) fails it.
    REL = 1e-12

    def test_module_reproduces_golden_logits(self):
        """StaticformerLM in float64 gives make_golden's logits and loss up to float64 rounding."""
        for c, p in CASES:
            m = sf.load(os.path.join(GOLDEN, f"{c}.model.safetensors"), dtype=torch.float64)
            b, _ = sf.read_safetensors(os.path.join(GOLDEN, f"{c}-{p}.batch.safetensors"))
            e, _ = sf.read_safetensors(os.path.join(GOLDEN, f"{c}-{p}.expected.safetensors"))
            pad = torch.from_numpy(b["padding"]) if "padding" in b else None
            logits, loss = m(torch.from_numpy(b["tokens"]), torch.from_numpy(b["targets"]), pad)
            got, want = logits.detach().numpy(), e["logits"]
            self.assertEqual(got.shape, want.shape, (c, p))
            self.assertLessEqual(np.abs(got - want).max(), self.REL * np.abs(want).max(), (c, p))
            self.assertLessEqual(abs(loss.item() - e["loss"][0]), self.REL * abs(e["loss"][0]), (c, p))

    def test_save_rewrites_golden_model_byte_for_byte(self):
        with tempfile.TemporaryDirectory() as d:
            for c in ("ref-gpt2", "ref-llama", "ref-vaswani", "nano"):
                src = os.path.join(GOLDEN, f"{c}.model.safetensors")
                m = sf.load(src)
                self.assertEqual(m.config, sf.REFERENCE_CONFIGS[c][0])
                m.save(os.path.join(d, "m.safetensors"))
                with open(src, "rb") as f1, open(os.path.join(d, "m.safetensors"), "rb") as f2:
                    self.assertEqual(f1.read(), f2.read(), c)

    def test_state_dict_names_are_spec_names(self):
        for name, (cfg, _) in sf.REFERENCE_CONFIGS.items():
            m = sf.StaticformerLM(cfg, seed=0)
            self.assertEqual([(n, tuple(p.shape)) for n, p in m.state_dict().items()], sf.param_shapes(cfg), name)


class Checkpoints(unittest.TestCase):
    def test_config_metadata_round_trip(self):
        cfg = sf.Config(10, 8, 12, 3, 1, 20, "rmsnorm", "rope", "relu", False, False, 1e-6)
        meta = cfg.metadata()
        self.assertEqual(meta["norm_eps"], "1e-06")
        self.assertEqual(meta["tied"], "false")
        self.assertEqual(sf.Config.from_metadata(meta), cfg)
        with self.assertRaisesRegex(ValueError, "d_model 12 is not divisible by n_heads 5"):
            sf.Config(10, 8, 12, 5, 1, 20)
        with self.assertRaisesRegex(ValueError, "RoPE needs an even head size"):
            sf.Config(10, 8, 12, 4, 1, 20, position="rope")
        with self.assertRaisesRegex(ValueError, "activation"):
            sf.Config(10, 8, 12, 4, 1, 20, activation="swish")
        with self.assertRaisesRegex(ValueError, "ffn"):
            sf.Config(10, 8, 12, 4, 1, 20, ffn="swiglu")
        # the optional keys: absent at their defaults, written and read back otherwise
        self.assertNotIn("ffn", sf.Config(10, 8, 12, 4, 1, 20).metadata())
        gated = sf.Config(10, 8, 16, 4, 1, 20, "rmsnorm", "rope", "silu", False, False, ffn="gated", rope_theta=5e5)
        self.assertEqual(gated.metadata()["ffn"], "gated")
        self.assertEqual(gated.metadata()["rope_theta"], "5e+05")
        self.assertEqual(sf.Config.from_metadata(gated.metadata()), gated)

    def test_load_refuses_with_the_tensor_named(self):
        cfg = sf.REFERENCE_CONFIGS["ref-gpt2"][0]
        tensors, meta = sf.read_safetensors(os.path.join(GOLDEN, "ref-gpt2.model.safetensors"))
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "m.safetensors")
            t = dict(tensors)
            t["blocks.0.attn.wq"] = t["blocks.0.attn.wq"][:, :16]
            sf.write_safetensors(p, t, meta)
            with self.assertRaisesRegex(ValueError, r"tensor 'blocks.0.attn.wq': expected shape \[32, 32\], found \[32, 16\]"):
                sf.load(p)
            t = dict(tensors)
            del t["pos_emb.weight"]
            sf.write_safetensors(p, t, meta)
            with self.assertRaisesRegex(ValueError, "missing tensor 'pos_emb.weight'"):
                sf.load(p)
            t = dict(tensors)
            t["norm_f.bias"] = t["norm_f.bias"].astype(np.float64)
            sf.write_safetensors(p, t, meta)
            with self.assertRaisesRegex(ValueError, "tensor 'norm_f.bias': expected dtype F32"):
                sf.load(p)
            sf.write_safetensors(p, tensors, dict(meta, n_heads="x"))
            with self.assertRaisesRegex(ValueError, "metadata 'n_heads'"):
                sf.load(p)
        self.assertEqual(cfg.n_heads, 4)

    def test_extra_metadata_is_kept(self):
        m = sf.StaticformerLM(sf.REFERENCE_CONFIGS["ref-gpt2"][0], seed=3)
        m.metadata["tokenizer.vocab"] = "[10,32]"
        with tempfile.TemporaryDirectory() as d:
            m.save(os.path.join(d, "m.safetensors"), {"note": "x"})
            back = sf.load(os.path.join(d, "m.safetensors"))
        self.assertEqual(back.metadata, {"tokenizer.vocab": "[10,32]", "note": "x"})
        for (n, a), b in zip(m.state_dict().items(), back.state_dict().values()):
            self.assertTrue(torch.equal(a, b), n)

    def test_safetensors_dtypes(self):
        """BF16 (as Hugging Face LLaMA files) is widened to float32; F16 stays float16; index.json shards."""
        x = torch.randn(5, 3)
        bf = x.to(torch.bfloat16)
        raw = bf.view(torch.int16).numpy().view(np.uint16)
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a.safetensors")
            sf.write_safetensors(p, [("h", x.half().numpy()), ("u", raw)])
            # relabel the U16 tensor as BF16 in the header (one byte longer: rewrite the length)
            with open(p, "rb") as f:
                data = f.read()
            n = struct.unpack("<Q", data[:8])[0]
            header = data[8:8 + n].replace(b'"dtype":"U16"', b'"dtype":"BF16"')
            with open(p, "wb") as f:
                f.write(struct.pack("<Q", len(header)) + header + data[8 + n:])
            t, _ = sf.read_safetensors(p)
            self.assertEqual(t["h"].dtype, np.float16)
            self.assertTrue(np.array_equal(t["u"], bf.float().numpy()))
            sf.write_safetensors(os.path.join(d, "b.safetensors"), [("g", x.numpy())])
            with open(os.path.join(d, "m.safetensors.index.json"), "w") as f:
                json.dump({"weight_map": {"h": "a.safetensors", "u": "a.safetensors", "g": "b.safetensors"}}, f)
            sd, _ = sf.read_state_dict(os.path.join(d, "m.safetensors.index.json"))
            self.assertEqual(sorted(sd), ["g", "h", "u"])

    def test_torch_files_load_without_running_code(self):
        class Evil:
            def __reduce__(self):
                return (os.system, ("echo pwned",))

        with tempfile.TemporaryDirectory() as d:
            good = os.path.join(d, "ckpt.pt")  # nanoGPT's ckpt.pt holds floats (torch 1.13's weights_only has none)
            torch.save({"model": {"w": torch.ones(2)}, "model_args": {"n_head": 2, "dropout": 0.0},
                        "config": {"learning_rate": 6e-4, "dataset": "x"}}, good)
            sd, info = sf.read_state_dict(good)
            self.assertEqual(info["model_args"]["dropout"], 0.0)
            bad = os.path.join(d, "evil.pt")
            torch.save({"model": {"w": torch.ones(2)}, "x": Evil()}, bad)
            with self.assertRaisesRegex(ValueError, "--trust-pickle"):
                sf.read_state_dict(bad)


class Converters(unittest.TestCase):
    """Each converter against its source module, both in float64: the same function up to rounding."""

    def check(self, source, model, T, tol=1e-12):
        source, model = source.double().eval(), model.double()
        tok = tokens_for(model.config.vocab, 3, T)
        with torch.no_grad():
            d = max_abs(source(tok), model(tok))
        self.assertLess(d, tol)
        return d

    def test_nanogpt_erf_gelu(self):
        src = randomize(NanoGPT(block_size=10, vocab_size=30, n_layer=2, n_head=2, n_embd=16, bias=True, dropout=0.0))
        m = sf.from_nanogpt(src.state_dict(), n_heads=2)
        self.assertEqual(m.config.activation, "gelu")
        self.assertTrue(m.config.tied)
        self.check(src, m, 10)
        sd, args = sf.to_nanogpt(m)  # and back: loads into nanoGPT's module, every tensor the same
        back = NanoGPT(**args)
        missing, unexpected = back.load_state_dict(sd, strict=False)
        self.assertEqual(unexpected, [])
        self.assertTrue(all(k.endswith(".attn.bias") for k in missing), missing)  # the mask buffers
        for k, v in src.state_dict().items():
            self.assertTrue(torch.equal(v.double(), back.state_dict()[k].double()), k)

    def test_nanogpt_no_bias_and_torch_compile_prefix(self):
        src = randomize(NanoGPT(block_size=8, vocab_size=20, n_layer=1, n_head=2, n_embd=8, bias=False, dropout=0.0))
        sd = {"_orig_mod." + k: v for k, v in src.state_dict().items()}
        m = sf.from_nanogpt(sd, model_args={"n_head": 2})
        self.assertFalse(m.config.bias)
        self.assertTrue(torch.equal(m.state_dict()["blocks.0.norm1.bias"], torch.zeros(8)))
        self.check(src, m, 8)

    def test_hf_gpt2_untied_and_relu(self):
        cfg = dict(vocab_size=30, n_positions=10, n_embd=16, n_layer=2, n_head=4, n_inner=24,
                   activation_function="relu", layer_norm_epsilon=1e-5, tie_word_embeddings=False)
        src = randomize(HFGPT2(cfg))
        m = sf.from_hf_gpt2(src.state_dict(), cfg)
        self.assertEqual((m.config.tied, m.config.activation, m.config.d_ff), (False, "relu", 24))
        self.check(src, m, 10)
        sd, hf = sf.to_hf_gpt2(m)
        back = HFGPT2(hf)
        missing, unexpected = back.load_state_dict(sd, strict=False)
        self.assertEqual(unexpected, [])
        self.assertTrue(all(k.endswith("attn.bias") or k.endswith("masked_bias") for k in missing), missing)
        self.check(back, m, 10)

    def test_hf_llama_rope_permutation_derived(self):
        """HF rotates halves, docs/model.md adjacent pairs: with the permutation the logits agree to 1e-12;
        without it (q, k rows as stored) they do not."""
        src = randomize(HFLlama(LLAMA, gated=False))
        m = sf.from_hf_llama(src.state_dict(), LLAMA)
        self.assertEqual(m.config.norm_eps, 1e-6)
        d = self.check(src, m, 12)
        perm = sf.rope_permutation(3, 8)
        self.assertEqual(perm[:8].tolist(), [0, 4, 1, 5, 2, 6, 3, 7])
        self.assertEqual(perm[8:10].tolist(), [8, 12])
        # the same conversion with the identity instead of the permutation
        wrong = sf.StaticformerLM(m.config)
        sd = m.state_dict()
        for l in range(2):
            for w, proj in (("wq", "q_proj"), ("wk", "k_proj")):
                sd[f"blocks.{l}.attn.{w}"] = src.state_dict()[f"model.layers.{l}.self_attn.{proj}.weight"].t()
        wrong.load_state_dict(sd)
        tok = tokens_for(40, 3, 12)
        with torch.no_grad():
            self.assertGreater(max_abs(src(tok), wrong.double()(tok)), 1e-3)
            # position 0 has angle 0: there the permutation does not matter
            self.assertLess(max_abs(src(tok)[:, 0], wrong(tok)[:, 0]), 1e-12)
        # rows as stored are right for a model that rotates halves (rope_pairs = "halves")
        halves = sf.StaticformerLM(dataclasses.replace(m.config, rope_pairs="halves"))
        halves.load_state_dict(sd)
        self.assertEqual(halves.config.metadata()["rope_pairs"], "halves")
        with torch.no_grad():
            self.assertLess(max_abs(src(tok), halves.double()(tok)), 1e-12)
        self.assertLess(d, 1e-12)
        sd2, hf = sf.to_hf_llama(m)  # and back
        for k, v in src.state_dict().items():
            self.assertTrue(torch.equal(v.double(), sd2[k].double()), k)
        self.assertEqual(hf["num_key_value_heads"], 3)

    def test_hf_llama_attention_bias_only_and_tied(self):
        cfg = dict(LLAMA, attention_bias=True, mlp_bias=False, tie_word_embeddings=True, hidden_act="relu")
        src = randomize(HFLlama(cfg, gated=False))
        sd = {k: v for k, v in src.state_dict().items() if k != "lm_head.weight"}  # tied: saved without the head
        m = sf.from_hf_llama(sd, cfg)
        self.assertTrue(m.config.bias and m.config.tied)
        self.assertTrue(torch.equal(m.state_dict()["blocks.0.ffn.b1"], torch.zeros(40)))
        self.check(src, m, 12)

    def test_refusals_name_the_feature(self):
        def refused(feature, fn, *a, **kw):
            with self.assertRaises(sf.UnsupportedFeature) as e:
                fn(*a, **kw)
            self.assertIn(feature, str(e.exception))
            return str(e.exception)

        plain = HFLlama(LLAMA, gated=False).state_dict()
        refused("rope_scaling", sf.from_hf_llama, plain, dict(LLAMA, rope_scaling={"type": "linear", "factor": 2.0}))
        refused("activation 'quick_gelu'", sf.from_hf_llama, plain, dict(LLAMA, hidden_act="quick_gelu"))
        refused("head_dim = 16", sf.from_hf_llama, plain, dict(LLAMA, head_dim=16))
        refused("sliding-window attention", sf.from_hf_llama, plain, dict(LLAMA, sliding_window=4))
        g2 = dict(vocab_size=30, n_positions=10, n_embd=16, n_layer=1, n_head=4)
        gpt2 = HFGPT2(g2).state_dict()
        refused("scale_attn_by_inverse_layer_idx", sf.from_hf_gpt2, gpt2, dict(g2, scale_attn_by_inverse_layer_idx=True))
        refused("activation 'quick_gelu'", sf.from_hf_gpt2, gpt2, dict(g2, activation_function="quick_gelu"))
        refused("cross-attention", sf.from_hf_gpt2, dict(gpt2, **{"transformer.h.0.crossattention.c_attn.weight": torch.zeros(16, 48)}), g2)
        # staticformer -> layouts that cannot hold the model
        ref_gpt2 = sf.load(os.path.join(GOLDEN, "ref-gpt2.model.safetensors"))
        refused("activation 'gelu_tanh'", sf.to_nanogpt, ref_gpt2)
        refused("normalisation 'rmsnorm'", sf.to_hf_gpt2, sf.load(os.path.join(GOLDEN, "ref-llama.model.safetensors")))
        refused("untied lm_head", sf.to_nanogpt, sf.StaticformerLM(sf.Config(20, 8, 16, 2, 1, 64, activation="gelu", tied=False)))

    def test_layout_errors(self):
        g2 = dict(vocab_size=30, n_positions=10, n_embd=16, n_layer=1, n_head=4)
        gpt2 = HFGPT2(g2).state_dict()
        with self.assertRaisesRegex(sf.ConversionError, "looks like Hugging Face's layout .--from hf-gpt2"):
            sf.from_nanogpt(gpt2, n_heads=4)
        nano = NanoGPT(block_size=8, vocab_size=20, n_layer=1, n_head=2, n_embd=8, bias=True, dropout=0.0).state_dict()
        with self.assertRaisesRegex(sf.ConversionError, "looks like nanoGPT's layout .--from nanogpt"):
            sf.from_hf_gpt2(nano, {"n_head": 2})
        with self.assertRaisesRegex(sf.ConversionError, "number of heads"):
            sf.from_nanogpt(nano)
        with self.assertRaisesRegex(sf.ConversionError, "unexpected tensor 'model.layers.0.self_attn.q_norm.weight'"):
            sd = dict(HFLlama(LLAMA, gated=False).state_dict(), **{"model.layers.0.self_attn.q_norm.weight": torch.ones(8)})
            sf.from_hf_llama(sd, LLAMA)
        with self.assertRaisesRegex(sf.ConversionError, "context length"):
            sf.from_hf_llama(HFLlama(LLAMA, gated=False).state_dict(), None, n_heads=3, activation="relu")


def _same_tensors(test, want, got, skip=()):
    """Every tensor of ``want`` in ``got``, bit for bit (and nothing else in ``got``)."""
    want = {k: v for k, v in want.items() if not any(k.endswith(s) for s in skip)}
    test.assertEqual(sorted(want), sorted(got))
    for k, v in want.items():
        test.assertEqual(v.dtype, got[k].dtype, k)
        test.assertTrue(torch.equal(v, got[k]), k)


class LlamaFamily(unittest.TestCase):
    """SwiGLU and grouped-query attention: Hugging Face's LlamaForCausalLM layout and llama2.c's model.py,
    each against its source module in float64, round trips bit for bit."""

    def check(self, source, model, T=12, tol=1e-12):
        source, model = copy.deepcopy(source).double().eval(), copy.deepcopy(model).double()
        tok = tokens_for(model.config.vocab, 3, T)
        with torch.no_grad():
            d = max_abs(source(tok), model(tok))
        self.assertLess(d, tol)
        return d

    def test_hf_llama_swiglu_gqa_both_rope_pairs(self):
        for kv in (2, 1, 3, 6):  # grouped-query, multi-query, and multi-head attention
            cfg = dict(LLAMA2, num_key_value_heads=kv)
            src = randomize(HFLlama(cfg), seed=kv)
            sd = src.state_dict()
            for pairs in ("adjacent", "halves"):
                m = sf.from_hf_llama(sd, cfg, rope_pairs=pairs)
                c = m.config
                self.assertEqual((c.ffn, c.activation, c.kv, c.rope_theta, c.rope_pairs, c.norm_eps, c.d_ff, c.tied),
                                 ("gated", "silu", kv, 500000.0, pairs, 1e-6, 40, False))
                self.assertEqual(tuple(m.state_dict()["blocks.0.attn.wk"].shape), (24, kv * 4))
                self.check(src, m)
                sd2, hf = sf.to_hf_llama(m)  # and back: LlamaForCausalLM's names and tensors, bit for bit
                _same_tensors(self, sd, sd2)
                self.assertEqual((hf["num_key_value_heads"], hf["rope_theta"], hf["hidden_act"], hf["model_type"]),
                                 (kv, 500000.0, "silu", "llama"))
                self.check(_loaded(HFLlama(hf), sd2), m)

    def test_gqa_rope_permutation_of_q_and_k(self):
        """q_proj's rows are permuted within each of the 6 query heads and k_proj's within each of its 2
        key/value heads (rope_permutation(kv, d_k)); leaving either as stored breaks the model."""
        src = randomize(HFLlama(LLAMA2), seed=5)
        m = sf.from_hf_llama(src.state_dict(), LLAMA2)
        self.check(src, m)
        self.assertEqual(sf.rope_permutation(2, 4).tolist(), [0, 2, 1, 3, 4, 6, 5, 7])
        tok = tokens_for(40, 3, 12)
        for w, proj in (("wq", "q_proj"), ("wk", "k_proj")):
            wrong = sf.StaticformerLM(m.config)
            sd = m.state_dict()
            sd[f"blocks.0.attn.{w}"] = src.state_dict()[f"model.layers.0.self_attn.{proj}.weight"].t()
            wrong.load_state_dict(sd)
            with torch.no_grad():
                self.assertGreater(max_abs(src.double()(tok), wrong.double()(tok)), 1e-3, w)

    def test_hf_llama_biases_and_tied(self):
        for ab, mb in ((True, True), (True, False), (False, True)):
            cfg = dict(LLAMA2, attention_bias=ab, mlp_bias=mb, tie_word_embeddings=True)
            src = randomize(HFLlama(cfg), seed=7)
            sd = {k: v for k, v in src.state_dict().items() if k != "lm_head.weight"}
            m = sf.from_hf_llama(sd, cfg)
            self.assertTrue(m.config.bias and m.config.tied)
            self.check(src, m)
            if not mb:
                self.assertTrue(torch.equal(m.state_dict()["blocks.1.ffn.b3"], torch.zeros(40)))
            if ab and mb:
                sd2, hf = sf.to_hf_llama(m)
                _same_tensors(self, src.state_dict(), sd2)
                self.assertTrue(hf["attention_bias"] and hf["mlp_bias"] and hf["tie_word_embeddings"])

    def test_llama2c_gqa(self):
        for kv, tied in ((3, True), (1, True), (2, False), (6, True)):
            args = dict(LLAMA2C, n_kv_heads=kv)
            src = randomize(Llama2c(tied=tied, **args), seed=kv)
            sd = src.state_dict()
            self.assertIn("layers.0.attention.mask", sd)  # PyTorch < 2's buffer: ignored
            m = sf.from_llama2c({"_orig_mod." + k: v for k, v in sd.items()}, model_args=args)
            c = m.config
            self.assertEqual((c.ffn, c.activation, c.kv, c.rope_theta, c.rope_pairs, c.tied, c.bias, c.d_ff),
                             ("gated", "silu", kv, 10000.0, "adjacent", tied, False, 36))
            self.check(src, m)
            if not tied:
                with self.assertRaisesRegex(sf.UnsupportedFeature, "untied lm_head"):
                    sf.to_llama2c(m)
                continue
            sd2, args2 = sf.to_llama2c(m)
            _same_tensors(self, sd, sd2, skip=("attention.mask",))
            back = Llama2c(**args2)
            missing, unexpected = back.load_state_dict(sd2, strict=False)
            self.assertEqual(unexpected, [])
            self.assertTrue(all(k.endswith("attention.mask") for k in missing), missing)
            self.check(back, m)

    def test_llama2c_and_hf_llama_are_the_same_model(self):
        """llama2.c -> staticformer -> Hugging Face: LlamaForCausalLM's layout gives llama2.c's logits, and
        back through rope_pairs halves (no permutation) -> llama2.c gives the same bits."""
        src = randomize(Llama2c(**LLAMA2C), seed=11)
        m = sf.from_llama2c(src.state_dict(), LLAMA2C)
        sd_hf, hf = sf.to_hf_llama(m)
        self.assertEqual(hf["num_key_value_heads"], 3)
        hf_module = _loaded(HFLlama(hf), sd_hf).double()
        tok = tokens_for(40, 3, 12)
        with torch.no_grad():
            self.assertLess(max_abs(copy.deepcopy(src).double()(tok), hf_module(tok)), 1e-12)
        halves = sf.from_hf_llama(sd_hf, hf, rope_pairs="halves")
        self.check(src, halves)
        sd_c, _ = sf.to_llama2c(halves)
        _same_tensors(self, src.state_dict(), sd_c, skip=("attention.mask",))

    def test_refusals(self):
        def refused(feature, fn, *a, **kw):
            with self.assertRaises(sf.UnsupportedFeature) as e:
                fn(*a, **kw)
            self.assertIn(feature, str(e.exception))

        m = sf.from_hf_llama(randomize(HFLlama(LLAMA2)).state_dict(), LLAMA2)
        refused("rope_theta = 500000.0", sf.to_llama2c, m)
        refused("feed-forward 'mlp'", sf.to_llama2c,
                sf.StaticformerLM(dataclasses.replace(sf.REFERENCE_CONFIGS["ref-llama"][0], activation="silu")))
        refused("biases", sf.to_llama2c, sf.StaticformerLM(sf.Config(40, 12, 24, 6, 1, 36, "rmsnorm", "rope", "silu",
                                                                      True, True, ffn="gated")))
        gpt2_gated = sf.StaticformerLM(sf.Config(20, 8, 16, 2, 1, 64, activation="gelu", ffn="gated"))
        refused("feed-forward 'gated'", sf.to_nanogpt, gpt2_gated)
        refused("feed-forward 'gated'", sf.to_hf_gpt2, gpt2_gated)
        gpt2_gqa = sf.StaticformerLM(sf.Config(20, 8, 16, 4, 1, 64, activation="gelu", n_kv_heads=2))
        refused("grouped-query attention", sf.to_nanogpt, gpt2_gqa)
        refused("grouped-query attention", sf.to_hf_gpt2, gpt2_gqa)
        sd = randomize(HFLlama(LLAMA2)).state_dict()
        with self.assertRaisesRegex(sf.ConversionError, "num_key_value_heads is 3, but .*k_proj.weight' has 8 rows = 2 heads"):
            sf.from_hf_llama(sd, dict(LLAMA2, num_key_value_heads=3))
        with self.assertRaisesRegex(sf.ConversionError, "tie_word_embeddings = true, but 'lm_head.weight' is not"):
            sf.from_hf_llama(sd, dict(LLAMA2, tie_word_embeddings=True))
        no_kv = {k: v for k, v in LLAMA2.items() if k != "num_key_value_heads"}
        for rows in (10, 16):  # not whole heads of 4; 4 heads, which do not divide 6
            bad = dict(sd, **{"model.layers.0.self_attn.k_proj.weight": torch.zeros(rows, 24)})
            with self.assertRaisesRegex(sf.ConversionError, f"{rows} rows: not a whole number of key/value heads"):
                sf.from_hf_llama(bad, no_kv)
        bad = {k: v for k, v in sd.items() if k != "model.layers.1.mlp.gate_proj.weight"}
        with self.assertRaisesRegex(sf.ConversionError, "missing tensor 'model.layers.1.mlp.gate_proj.weight'"):
            sf.from_hf_llama(bad, LLAMA2)
        c = randomize(Llama2c(**LLAMA2C)).state_dict()
        with self.assertRaisesRegex(sf.ConversionError, "model_args n_kv_heads is 2, but"):
            sf.from_llama2c(c, dict(LLAMA2C, n_kv_heads=2))
        with self.assertRaisesRegex(sf.ConversionError, "unexpected tensor 'layers.0.attention.wq.bias'"):
            sf.from_llama2c(dict(c, **{"layers.0.attention.wq.bias": torch.zeros(24)}), LLAMA2C)


def _loaded(module, state_dict):
    module.load_state_dict(state_dict, strict=True)
    return module.eval()


def _transformers():
    """transformers' LlamaConfig and LlamaForCausalLM when they import and work with this torch; else the
    reason why not."""
    try:
        import transformers
        from transformers import LlamaConfig, LlamaForCausalLM
        LlamaForCausalLM(LlamaConfig(vocab_size=8, hidden_size=8, intermediate_size=8, num_hidden_layers=1,
                                     num_attention_heads=2))
        return (LlamaConfig, LlamaForCausalLM), transformers.__version__
    except Exception as e:  # ImportError, or transformers without a usable PyTorch (its dummy objects raise)
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


TRANSFORMERS, TRANSFORMERS_WHY = _transformers()


@unittest.skipUnless(TRANSFORMERS, f"transformers' LlamaForCausalLM is not available ({TRANSFORMERS_WHY})")
class TransformersLlama(unittest.TestCase):
    """transformers' own LlamaForCausalLM with random weights, both ways. Its float64 is not all float64
    (transformers 4.35): LlamaRMSNorm and the attention's softmax compute in float32, so do its RoPE
    frequencies, and the logits are cast to float32. So the logits agree to float32 rounding: measured
    1.5e-6 to 2.5e-6 with logits up to 4.7 (2.0e-7 with those steps of transformers patched to float64,
    the float32 cast of the logits), and the bound is 1e-5. Reading q_proj / k_proj with the wrong
    RoPE pairs is off by more than 1e-2. Round trips keep every bit."""
    TOL = 1e-5

    def model(self, **over):
        LlamaConfig, LlamaForCausalLM = TRANSFORMERS
        config = LlamaConfig(**dict(LLAMA2, **over))
        torch.manual_seed(0)
        return randomize(LlamaForCausalLM(config), seed=3).double().eval(), config

    def logits(self, module, tok):
        # transformers 4.35 builds its causal mask with torch.full(..., finfo(model dtype).min) in the default
        # dtype, which overflows for float64 on torch 1.13: float64 is the default for the call
        dtype = torch.get_default_dtype()
        torch.set_default_dtype(next(module.parameters()).dtype)
        try:
            with torch.no_grad():
                return module(tok).logits
        finally:
            torch.set_default_dtype(dtype)

    def test_from_and_to_llama_for_causal_lm(self):
        _, LlamaForCausalLM = TRANSFORMERS
        tok = tokens_for(40, 3, 12)
        for over in ({}, {"num_key_value_heads": 1, "tie_word_embeddings": True}, {"num_key_value_heads": 6}):
            hf, config = self.model(**over)
            sd = hf.state_dict()
            ref = self.logits(hf, tok)
            for pairs in ("adjacent", "halves"):
                m = sf.from_hf_llama(sd, config.to_dict(), rope_pairs=pairs).double()
                with torch.no_grad():
                    d = max_abs(ref, m(tok))
                print(f"  LlamaForCausalLM {over or 'kv=2'} {pairs}: max|staticformer - transformers| = {d:.1e}",
                      file=sys.stderr)
                self.assertLess(d, self.TOL)
                sd2, cfg2 = sf.to_hf_llama(m)
                back = LlamaForCausalLM(type(config)(**cfg2)).double().eval()
                back.load_state_dict(sd2, strict=True)
                for k, v in sd.items():
                    self.assertTrue(torch.equal(v.float(), back.state_dict()[k].float()), k)
                self.assertTrue(torch.equal(self.logits(back, tok), ref))
        # without the permutation of q_proj and k_proj: wrong
        h = sf.from_hf_llama(sd, config.to_dict(), rope_pairs="halves")
        w = sf.StaticformerLM(h.config.replace(rope_pairs="adjacent"))
        w.load_state_dict(h.state_dict())
        with torch.no_grad():
            self.assertGreater(max_abs(ref, w.double()(tok)), 1e-2)

    def test_save_pretrained_and_from_pretrained(self):
        """The command line both ways: convert a save_pretrained directory; to-torch --to hf-llama gives a
        directory from_pretrained loads."""
        _, LlamaForCausalLM = TRANSFORMERS
        hf, config = self.model()
        hf = hf.float()
        tok = tokens_for(40, 2, 12)
        with tempfile.TemporaryDirectory() as d:
            hf.save_pretrained(os.path.join(d, "hf"))
            out = os.path.join(d, "m.safetensors")
            rc, so, err = cli_here("convert", "--from", "hf-llama", os.path.join(d, "hf"), out)
            self.assertEqual(rc, 0, err)
            m = sf.load(out)
            self.assertEqual((m.config.kv, m.config.ffn, m.config.rope_theta), (2, "gated", 500000.0))
            rc, so, err = cli_here("to-torch", "--to", "hf-llama", out, os.path.join(d, "back"))
            self.assertEqual(rc, 0, err)
            back = LlamaForCausalLM.from_pretrained(os.path.join(d, "back")).eval()
            for k, v in hf.state_dict().items():
                self.assertTrue(torch.equal(v, back.state_dict()[k]), k)
            self.assertTrue(torch.equal(self.logits(back, tok), self.logits(hf, tok)))


def cli_here(*args):
    """``python3 -m staticformer ARGS`` in this process (the same main(); no second start of torch, which
    takes seconds on a busy machine) -> (returncode, stdout, stderr)."""
    from staticformer.__main__ import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


class CommandLine(unittest.TestCase):
    def test_convert_swiglu_gqa_directory_and_refusal(self):
        """A LlamaForCausalLM-layout directory (config.json + pytorch_model.bin) converts; rope_scaling is
        refused with no file written."""
        with tempfile.TemporaryDirectory() as d:
            cfg = dict(LLAMA2, model_type="llama")
            src = randomize(HFLlama(cfg))
            os.makedirs(os.path.join(d, "llama"))
            torch.save(src.state_dict(), os.path.join(d, "llama", "pytorch_model.bin"))
            with open(os.path.join(d, "llama", "config.json"), "w") as f:
                json.dump(cfg, f)
            out = os.path.join(d, "o.safetensors")
            rc, so, err = cli_here("convert", "--from", "hf-llama", os.path.join(d, "llama"), out)
            self.assertEqual(rc, 0, err)
            self.assertIn("kv_heads=2 L=2 F=40 gated rmsnorm rope silu untied no-bias norm_eps=1e-06 rope_base=5e+05", so)
            m = sf.load(out, dtype=torch.float64)
            tok = tokens_for(40, 2, 12)
            with torch.no_grad():  # float32 weights on both sides, computed in float64
                self.assertLess(max_abs(src.double()(tok), m(tok)), 1e-12)
            rc, so, err = cli_here("convert", "--from", "hf-llama", "--rope-pairs", "halves", os.path.join(d, "llama"), out)
            self.assertEqual(rc, 0, err)
            self.assertIn("rope_pairs=halves", so)
            with open(os.path.join(d, "llama", "config.json"), "w") as f:
                json.dump(dict(cfg, rope_scaling={"type": "linear", "factor": 2.0}), f)
            os.remove(out)
            rc, so, err = cli_here("convert", "--from", "hf-llama", os.path.join(d, "llama"), out)
            self.assertEqual(rc, 1)
            self.assertIn("unsupported feature: rope_scaling", err)
            self.assertFalse(os.path.exists(out))

    def test_llama2c_ckpt_both_ways(self):
        """llama2.c's ckpt.pt ({'model', 'model_args', ...} with floats) -> checkpoint -> ckpt.pt: the same tensors."""
        with tempfile.TemporaryDirectory() as d:
            src = randomize(Llama2c(**LLAMA2C))
            ckpt = os.path.join(d, "ckpt.pt")
            torch.save({"model": {"_orig_mod." + k: v for k, v in src.state_dict().items()},
                        "model_args": dict(LLAMA2C, multiple_of=32, dropout=0.0), "iter_num": 3,
                        "config": {"learning_rate": 5e-4}}, ckpt)
            out = os.path.join(d, "m.safetensors")
            rc, so, err = cli_here("convert", "--from", "llama2c", ckpt, out)
            self.assertEqual(rc, 0, err)
            self.assertIn("V=40 T=12 D=24 H=6 kv_heads=3 L=2 F=36 gated rmsnorm rope silu tied no-bias", so)
            rc, so, err = cli_here("to-torch", "--to", "llama2c", out, os.path.join(d, "back.pt"))
            self.assertEqual(rc, 0, err)
            back = torch.load(os.path.join(d, "back.pt"))
            self.assertEqual(back["model_args"]["n_kv_heads"], 3)
            _same_tensors(self, src.state_dict(), back["model"], skip=("attention.mask",))
            rc, so, err = cli_here("to-torch", "--to", "llama2c", os.path.join(GOLDEN, "ref-llama.model.safetensors"),
                              os.path.join(d, "x.pt"))
            self.assertEqual(rc, 1)
            self.assertIn("unsupported feature: activation 'relu'", err)

    def test_to_torch_and_back(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(GOLDEN, "ref-llama.model.safetensors")
            rc, out, err = cli("to-torch", "--to", "hf-llama", src, os.path.join(d, "hf"))
            self.assertEqual(rc, 0, err)
            rc, out, err = cli("convert", "--from", "hf-llama", os.path.join(d, "hf"), os.path.join(d, "back.safetensors"))
            self.assertEqual(rc, 0, err)
            self.assertIn("'ref-llama'", out)
            with open(src, "rb") as f1, open(os.path.join(d, "back.safetensors"), "rb") as f2:
                self.assertEqual(f1.read(), f2.read())
            rc, out, err = cli("to-torch", src, os.path.join(d, "m.pt"))
            self.assertEqual(rc, 0, err)
            rc, out, err = cli("convert", "--from", "staticformer", os.path.join(d, "m.pt"), os.path.join(d, "b2.safetensors"))
            self.assertEqual(rc, 0, err)
            with open(src, "rb") as f1, open(os.path.join(d, "b2.safetensors"), "rb") as f2:
                self.assertEqual(f1.read(), f2.read())
            rc, out, err = cli("to-torch", "--to", "nanogpt", os.path.join(GOLDEN, "ref-gpt2.model.safetensors"),
                               os.path.join(d, "n.pt"))
            self.assertEqual(rc, 1)
            self.assertIn("unsupported feature: activation 'gelu_tanh'", err)
            rc, out, err = cli("info", src)
            self.assertEqual(rc, 0, err)
            self.assertIn("V=96 T=24 D=48 H=6 L=3 F=96 rmsnorm rope relu untied no-bias", out)


if __name__ == "__main__":
    unittest.main()
