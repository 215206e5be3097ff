"""Minimal copies of the PyTorch models users come from, for the interop tests (transformers is not
needed). Each keeps its project's parameter names, weight orientations and arithmetic:

* NanoGPT  — karpathy/nanoGPT model.py: GPT with ``transformer.{wte,wpe,h,ln_f}``, fused ``c_attn``
  ``nn.Linear(D, 3D)`` ([out, in] weights), ``nn.GELU()`` (erf), LayerNorm with optional bias, tied
  ``lm_head``; the attention's non-flash path (torch 1.13 has no scaled_dot_product_attention).
* HFGPT2   — transformers' GPT2LMHeadModel: ``Conv1D`` (weight [in, out], ``x @ W + b``), ``gelu_new``,
  ``layer_norm_epsilon``, the causal-mask buffer ``attn.bias``, ``lm_head`` tied to ``wte``.
* HFLlama  — transformers' LlamaForCausalLM: LlamaRMSNorm, ``rotate_half`` RoPE with
  ``inv_freq = 1 / base^(arange(0, d, 2) / d)`` in float32, q/k/v/o_proj, repeat_kv for grouped-query
  attention, and the MLP either gated (LLaMA's SwiGLU: ``down(act(gate(x)) * up(x))``) or plain
  (``down(act(up(x)))``, a LLaMA-style variant staticformer converts too).
* Llama2c  — karpathy/llama2.c model.py: Transformer with ``tok_embeddings``, ``layers.{l}.attention.{wq,wk,wv,wo}``
  (grouped-query: wk, wv of n_kv_heads heads), ``attention_norm``, ``ffn_norm``, ``feed_forward.{w1,w2,w3}``
  (SwiGLU ``w2(silu(w1 x) * w3 x)``), ``norm``, ``output`` tied to ``tok_embeddings``; RoPE on adjacent pairs
  (its complex-number form, written with real numbers), base 10000; the ``attention.mask`` buffer of its
  PyTorch < 2 path. Written for these tests from that file's description, in the dtype of the input (no
  float32 casts, so that float64 comparisons are exact); ``tied=False`` unties the head (as Meta's weights).

Each ``forward(idx)`` returns the logits of every position, (B, T, V).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


# ----------------------------------------------------------------------------- nanoGPT
class _NLayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class _NAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["bias"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["bias"])
        self.n_head, self.n_embd = c["n_head"], c["n_embd"]
        T = c["block_size"]
        self.register_buffer("bias", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class _NMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"], bias=c["bias"])
        self.gelu = nn.GELU(approximate=c.get("gelu_approximate", "none"))
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"], bias=c["bias"])

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class _NBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = _NLayerNorm(c["n_embd"], c["bias"])
        self.attn = _NAttention(c)
        self.ln_2 = _NLayerNorm(c["n_embd"], c["bias"])
        self.mlp = _NMLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    """model_args as nanoGPT's GPTConfig: block_size, vocab_size, n_layer, n_head, n_embd, bias
    (+ gelu_approximate, 'none' as nanoGPT, 'tanh' for a model staticformer-run has compiled in)."""

    def __init__(self, **c):
        super().__init__()
        self.c = c
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            h=nn.ModuleList([_NBlock(c) for _ in range(c["n_layer"])]),
            ln_f=_NLayerNorm(c["n_embd"], c["bias"]),
        ))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c["n_layer"]))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


# ----------------------------------------------------------------------------- Hugging Face GPT-2
class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: weight [nx, nf] = [in, out]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


_HF_ACT = {"gelu_new": lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0)))),
           "gelu": F.gelu, "relu": F.relu, "silu": F.silu,
           "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh")}


class _GAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        D, T = c["n_embd"], c["n_positions"]
        self.register_buffer("bias", torch.tril(torch.ones((T, T), dtype=torch.bool)).view(1, 1, T, T))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.num_heads, self.head_dim, self.embed_dim = c["n_head"], D // c["n_head"], D
        self.c_attn = Conv1D(3 * D, D)
        self.c_proj = Conv1D(D, D)

    def _split_heads(self, t):
        return t.view(t.size()[:-1] + (self.num_heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, x):
        query, key, value = self.c_attn(x).split(self.embed_dim, dim=2)
        query, key, value = self._split_heads(query), self._split_heads(key), self._split_heads(value)
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype)
        q_len, k_len = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, k_len - q_len:k_len, :k_len]
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        out = torch.matmul(attn_weights, value).permute(0, 2, 1, 3).contiguous()
        out = out.view(out.size()[:-2] + (self.embed_dim,))
        return self.c_proj(out)


class _GMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        D = c["n_embd"]
        inner = c.get("n_inner") or 4 * D
        self.c_fc = Conv1D(inner, D)
        self.c_proj = Conv1D(D, inner)
        self.act = _HF_ACT[c.get("activation_function", "gelu_new")]

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class _GBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        eps = c.get("layer_norm_epsilon", 1e-5)
        self.ln_1 = nn.LayerNorm(c["n_embd"], eps=eps)
        self.attn = _GAttention(c)
        self.ln_2 = nn.LayerNorm(c["n_embd"], eps=eps)
        self.mlp = _GMLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class _GModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.wpe = nn.Embedding(c["n_positions"], c["n_embd"])
        self.h = nn.ModuleList([_GBlock(c) for _ in range(c["n_layer"])])
        self.ln_f = nn.LayerNorm(c["n_embd"], eps=c.get("layer_norm_epsilon", 1e-5))
        nn.init.normal_(self.wte.weight, std=0.02)
        nn.init.normal_(self.wpe.weight, std=0.01)


class HFGPT2(nn.Module):
    """config as GPT2Config's config.json: vocab_size, n_positions, n_embd, n_layer, n_head, n_inner,
    activation_function, layer_norm_epsilon, tie_word_embeddings."""

    def __init__(self, config):
        super().__init__()
        self.config = dict(config)
        self.transformer = _GModel(self.config)
        self.lm_head = nn.Linear(config["n_embd"], config["vocab_size"], bias=False)
        if self.config.get("tie_word_embeddings", True):
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, idx):
        t = idx.size(1)
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(t))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


# ----------------------------------------------------------------------------- Hugging Face LLaMA
class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32) if input_dtype != torch.float64 else hidden_states
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def llama_rotary(head_dim, T, base, dtype):
    """LlamaRotaryEmbedding: inv_freq in float32, angles in float32, cos/sin cast to the model's dtype
    (in float64 when the model is float64, for the tests' exact comparisons)."""
    ft = torch.float64 if dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).to(ft) / head_dim))
    t = torch.arange(T, dtype=torch.int64).to(ft)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class _LAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        D, H = c["hidden_size"], c["num_attention_heads"]
        self.H, self.KV = H, c.get("num_key_value_heads") or H
        self.hd = D // H
        self.theta = c.get("rope_theta", 10000.0)
        ab = c.get("attention_bias", False)
        self.q_proj = nn.Linear(D, H * self.hd, bias=ab)
        self.k_proj = nn.Linear(D, self.KV * self.hd, bias=ab)
        self.v_proj = nn.Linear(D, self.KV * self.hd, bias=ab)
        self.o_proj = nn.Linear(H * self.hd, D, bias=ab)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.H, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.KV, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.KV, self.hd).transpose(1, 2)
        cos, sin = llama_rotary(self.hd, T, self.theta, x.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k, self.H // self.KV), repeat_kv(v, self.H // self.KV)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd)
        mask = torch.full((T, T), torch.finfo(x.dtype).min, dtype=x.dtype).triu(1)
        w = nn.functional.softmax(w + mask, dim=-1, dtype=torch.float32 if x.dtype != torch.float64 else x.dtype).to(q.dtype)
        o = torch.matmul(w, v).transpose(1, 2).reshape(B, T, -1)
        return self.o_proj(o)


class _LMLP(nn.Module):
    def __init__(self, c, gated):
        super().__init__()
        D, F_ = c["hidden_size"], c["intermediate_size"]
        mb = c.get("mlp_bias", False)
        if gated:
            self.gate_proj = nn.Linear(D, F_, bias=mb)
        self.up_proj = nn.Linear(D, F_, bias=mb)
        self.down_proj = nn.Linear(F_, D, bias=mb)
        self.gated = gated
        self.act = _HF_ACT[c["hidden_act"]]

    def forward(self, x):
        if self.gated:
            return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(self.act(self.up_proj(x)))


class _LLayer(nn.Module):
    def __init__(self, c, gated):
        super().__init__()
        self.input_layernorm = LlamaRMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.self_attn = _LAttention(c)
        self.post_attention_layernorm = LlamaRMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.mlp = _LMLP(c, gated)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class _LModel(nn.Module):
    def __init__(self, c, gated):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([_LLayer(c, gated) for _ in range(c["num_hidden_layers"])])
        self.norm = LlamaRMSNorm(c["hidden_size"], c["rms_norm_eps"])


class HFLlama(nn.Module):
    """config as LlamaConfig's config.json; ``gated=False`` gives the plain-MLP LLaMA-style model."""

    def __init__(self, config, gated=True):
        super().__init__()
        self.config = dict(config)
        self.model = _LModel(self.config, gated)
        self.lm_head = nn.Linear(config["hidden_size"], config["vocab_size"], bias=False)
        if self.config.get("tie_word_embeddings", False):
            self.lm_head.weight = self.model.embed_tokens.weight
        for n, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.05)

    def forward(self, idx):
        x = self.model.embed_tokens(idx)
        for layer in self.model.layers:
            x = layer(x)
        return self.lm_head(self.model.norm(x))


# ----------------------------------------------------------------------------- llama2.c
class _CRMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _rotate_adjacent(x, cos, sin):
    """x (B, T, heads, d): each pair (2i, 2i+1) as a complex number times e^(i t w_i)."""
    re, im = x.reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((re * cos - im * sin, re * sin + im * cos), dim=-1).flatten(3)


class _CAttention(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.n_heads = a["n_heads"]
        self.n_kv = a.get("n_kv_heads") or a["n_heads"]
        self.hd = a["dim"] // a["n_heads"]
        self.wq = nn.Linear(a["dim"], self.n_heads * self.hd, bias=False)
        self.wk = nn.Linear(a["dim"], self.n_kv * self.hd, bias=False)
        self.wv = nn.Linear(a["dim"], self.n_kv * self.hd, bias=False)
        self.wo = nn.Linear(self.n_heads * self.hd, a["dim"], bias=False)
        T = a["max_seq_len"]
        self.register_buffer("mask", torch.triu(torch.full((1, 1, T, T), float("-inf")), diagonal=1))

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q = _rotate_adjacent(self.wq(x).view(B, T, self.n_heads, self.hd), cos, sin)
        k = _rotate_adjacent(self.wk(x).view(B, T, self.n_kv, self.hd), cos, sin)
        v = self.wv(x).view(B, T, self.n_kv, self.hd)
        rep = self.n_heads // self.n_kv  # each key/value head serves rep consecutive query heads
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        s = q @ k.transpose(2, 3) / math.sqrt(self.hd) + self.mask[:, :, :T, :T].to(x.dtype)
        o = torch.softmax(s, dim=-1) @ v
        return self.wo(o.transpose(1, 2).reshape(B, T, -1))


class _CFeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class _CBlock(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.attention = _CAttention(a)
        self.feed_forward = _CFeedForward(a["dim"], a["hidden_dim"])
        self.attention_norm = _CRMSNorm(a["dim"], a.get("norm_eps", 1e-5))
        self.ffn_norm = _CRMSNorm(a["dim"], a.get("norm_eps", 1e-5))

    def forward(self, x, cos, sin):
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.feed_forward(self.ffn_norm(x))


class Llama2c(nn.Module):
    """model_args as llama2.c's ModelArgs (dim, n_layers, n_heads, n_kv_heads, vocab_size, hidden_dim,
    norm_eps, max_seq_len); ``tied=False`` gives ``output`` its own weight."""

    def __init__(self, tied=True, **a):
        super().__init__()
        self.args = a
        self.tok_embeddings = nn.Embedding(a["vocab_size"], a["dim"])
        self.layers = nn.ModuleList([_CBlock(a) for _ in range(a["n_layers"])])
        self.norm = _CRMSNorm(a["dim"], a.get("norm_eps", 1e-5))
        self.output = nn.Linear(a["dim"], a["vocab_size"], bias=False)
        if tied:
            self.tok_embeddings.weight = self.output.weight
        for n, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.05)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok_embeddings(idx)
        hd = self.args["dim"] // self.args["n_heads"]
        w = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=x.dtype) / hd))
        ang = torch.outer(torch.arange(T, dtype=x.dtype), w)
        cos, sin = torch.cos(ang), torch.sin(ang)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.output(self.norm(x))
