"""docs/model.md's model in PyTorch: the configuration, the computation term by term, and an nn.Module.

    cfg = Config(vocab=65, context=16, d_model=32, n_heads=4, n_layers=2, d_ff=128)   # ref-gpt2
    cfg = Config(90, 20, 48, 6, 2, 100, "rmsnorm", "rope", "silu", False, False,     # ref-llama2: SwiGLU,
                 n_kv_heads=2, ffn="gated")                                           # grouped-query attention
    model = StaticformerLM(cfg)                 # state_dict() names are docs/model.md's checkpoint names
    logits = model(tokens)                      # (B, T, V); model(tokens, targets=t) -> (logits, loss)
    model.save("m.safetensors")                 # a staticformer checkpoint, config in __metadata__
    model = load("m.safetensors")               # and back (any checkpoint of docs/model.md's format)

The functions below (`forward`, `loss_fn`, and the pieces they call) are written from docs/model.md term
by term in plain PyTorch, without nn.LayerNorm or nn.MultiheadAttention, and work in any floating
dtype: tools/make_golden.py computes the golden files in float64 with them. Every architecture field of
docs/model.md is there: the gated feed-forward (``ffn = gated``: ``(act(x W1 + b1) * (x W3 + b3)) W2 + b2``,
SwiGLU with ``silu``), grouped-query attention (``n_kv_heads``: query head h reads key/value head
``h // (n_heads / n_kv_heads)``), RoPE's base (``rope_theta``) and pairs (``rope_pairs`` adjacent | halves),
with the angles computed in float64. Matrices act on rows,
``y = x W`` with ``W`` stored ``[in, out]``, as in docs/model.md (PyTorch's nn.Linear stores ``[out, in]``).
"""
import math
from dataclasses import dataclass, fields, replace

import numpy as np
import torch
from torch import nn

from .safetensors import read_safetensors, write_safetensors

__all__ = ["Config", "REFERENCE_CONFIGS", "StaticformerLM", "load", "save", "forward", "loss_fn",
           "param_shapes"]

NORMS = ("layernorm", "rmsnorm")
POSITIONS = ("learned", "sinusoidal", "rope")
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")
FFNS = ("mlp", "gated")
ROPE_PAIRS = ("adjacent", "halves")


@dataclass(frozen=True)
class Config:
    """A model's configuration: the fields of docs/model.md's ``__metadata__`` (the batch size is not one)."""
    vocab: int
    context: int
    d_model: int
    n_heads: int
    n_layers: int
    d_ff: int
    norm: str = "layernorm"          # layernorm | rmsnorm
    position: str = "learned"        # learned | sinusoidal | rope
    activation: str = "gelu_tanh"    # relu | gelu | gelu_tanh | silu
    tied: bool = True                # lm_head = tok_emb^T
    bias: bool = True                # biases of attention and FFN
    norm_eps: float = 1e-5
    # Optional metadata keys (written only when not the default, the default when absent):
    n_kv_heads: int = 0              # heads of K and V (grouped-query attention); 0 = n_heads
    ffn: str = "mlp"                 # mlp | gated (gated + silu = LLaMA's SwiGLU: w2(silu(x w1) * (x w3)))
    rope_theta: float = 10000.0      # RoPE's base
    rope_pairs: str = "adjacent"     # adjacent (2i, 2i+1): Meta, llama2.c | halves (i, i + dk/2): Hugging Face

    OPTIONAL = {"n_kv_heads": 0, "ffn": "mlp", "rope_theta": 10000.0, "rope_pairs": "adjacent"}

    def __post_init__(self):
        for f in ("vocab", "context", "d_model", "n_heads", "n_layers", "d_ff"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"config '{f}' must be a positive integer, found {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_heads {self.n_heads}")
        if self.n_kv_heads == self.n_heads:
            object.__setattr__(self, "n_kv_heads", 0)
        if self.n_kv_heads < 0 or (self.n_kv_heads and self.n_heads % self.n_kv_heads):
            raise ValueError(f"n_kv_heads {self.n_kv_heads} does not divide n_heads {self.n_heads}")
        if not self.rope_theta > 0:
            raise ValueError(f"config 'rope_theta' must be a positive number, found {self.rope_theta!r}")
        object.__setattr__(self, "rope_theta", float(self.rope_theta))
        for f, allowed in (("norm", NORMS), ("position", POSITIONS), ("activation", ACTIVATIONS), ("ffn", FFNS),
                         ("rope_pairs", ROPE_PAIRS)):
            if getattr(self, f) not in allowed:
                raise ValueError(f"config '{f}': expected one of {', '.join(allowed)}, found {getattr(self, f)!r}")
        if self.position == "rope" and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"RoPE needs an even head size; d_model / n_heads = {self.d_model // self.n_heads}")
        if isinstance(self.norm_eps, bool) or not isinstance(self.norm_eps, (int, float)) or not self.norm_eps > 0:
            raise ValueError(f"config 'norm_eps' must be a positive number, found {self.norm_eps!r}")
        object.__setattr__(self, "norm_eps", float(self.norm_eps))

    @property
    def d_k(self):
        return self.d_model // self.n_heads

    @property
    def kv(self):
        """The key/value heads (grouped-query attention: n_heads / kv query heads share one)."""
        return self.n_kv_heads or self.n_heads

    def metadata(self):
        """docs/model.md's ``__metadata__``: every value a string, in docs/model.md's order."""
        return {
            "format": "staticformer",
            "vocab": str(self.vocab), "context": str(self.context), "d_model": str(self.d_model),
            "n_heads": str(self.n_heads), "n_layers": str(self.n_layers), "d_ff": str(self.d_ff),
            "norm": self.norm, "position": self.position, "activation": self.activation,
            "tied": "true" if self.tied else "false", "bias": "true" if self.bias else "false",
            "norm_eps": repr(float(self.norm_eps)),  # "1e-05", the shortest round-trip form
            **({"n_kv_heads": str(self.n_kv_heads)} if self.n_kv_heads else {}),
            **({"ffn": self.ffn} if self.ffn != "mlp" else {}),
            **({"rope_theta": _number(self.rope_theta)} if self.rope_theta != 10000.0 else {}),
            **({"rope_pairs": self.rope_pairs} if self.rope_pairs != "adjacent" else {}),
        }

    @classmethod
    def from_metadata(cls, meta):
        """The configuration of a checkpoint's ``__metadata__`` (other keys are ignored)."""
        if meta.get("format") != "staticformer":
            raise ValueError(f"metadata 'format': expected \"staticformer\", found {meta.get('format')!r}")
        kw = {}
        for f in fields(cls):
            if f.name not in meta:
                if f.name in cls.OPTIONAL:
                    continue
                raise ValueError(f"missing metadata '{f.name}'")
            v = meta[f.name]
            try:
                if f.type in (int, "int"):
                    kw[f.name] = int(v)
                elif f.type in (float, "float"):
                    kw[f.name] = float(v)
                elif f.type in (bool, "bool"):
                    if v not in ("true", "false"):
                        raise ValueError
                    kw[f.name] = v == "true"
                else:
                    kw[f.name] = v
            except ValueError:
                raise ValueError(f"metadata '{f.name}': cannot read {v!r}") from None
        return cls(**kw)

    def replace(self, **changes):
        return replace(self, **changes)

    def describe(self):
        """``V=65 T=16 D=32 H=4 L=2 F=128 layernorm learned gelu_tanh tied bias`` (as staticformer-run)."""
        kv = f" kv_heads={self.n_kv_heads}" if self.n_kv_heads else ""
        s = (f"V={self.vocab} T={self.context} D={self.d_model} H={self.n_heads}{kv} L={self.n_layers} "
             f"F={self.d_ff} {self.norm} {self.position} {self.activation} "
             f"{'tied' if self.tied else 'untied'} {'bias' if self.bias else 'no-bias'}")
        if self.ffn != "mlp":
            s = s.replace(f" {self.norm} ", f" {self.ffn} {self.norm} ", 1)
        if self.norm_eps != 1e-5:
            s += f" norm_eps={self.norm_eps!r}"
        if self.rope_theta != 10000.0:
            s += f" rope_base={_number(self.rope_theta)}"
        if self.rope_pairs != "adjacent":
            s += f" rope_pairs={self.rope_pairs}"
        return s


def _number(v):
    """A number as the C++ side writes it (printf's %.17g, shortest that round-trips: 5e+05, 10000)."""
    for digits in range(1, 18):
        s = f"{v:.{digits}g}"
        if float(s) == v:
            return s
    return repr(v)


# docs/model.md's reference configurations (compiled into staticformer-run), with their batch sizes.
REFERENCE_CONFIGS = {
    "ref-gpt2": (Config(65, 16, 32, 4, 2, 128, "layernorm", "learned", "gelu_tanh", True, True), 2),
    "ref-llama": (Config(96, 24, 48, 6, 3, 96, "rmsnorm", "rope", "relu", False, False), 3),
    "ref-vaswani": (Config(50, 12, 40, 5, 1, 160, "layernorm", "sinusoidal", "gelu", False, True), 1),
    "nano": (Config(65, 64, 64, 4, 2, 256, "layernorm", "learned", "gelu_tanh", True, True), 4),
    "ref-llama2": (Config(90, 20, 48, 6, 2, 100, "rmsnorm", "rope", "silu", False, False, n_kv_heads=2,
                          ffn="gated"), 2),
}


def param_shapes(cfg):
    """docs/model.md's checkpoint table for ``cfg``: ``[(name, shape)]`` in declaration order."""
    V, T, D, L, F = cfg.vocab, cfg.context, cfg.d_model, cfg.n_layers, cfg.d_ff
    ln = cfg.norm == "layernorm"
    out = [("tok_emb.weight", (V, D))]
    if cfg.position == "learned":
        out.append(("pos_emb.weight", (T, D)))
    for l in range(L):
        p = f"blocks.{l}."
        out.append((p + "norm1.weight", (D,)))
        if ln:
            out.append((p + "norm1.bias", (D,)))
        DK = cfg.kv * cfg.d_k
        for w in ("wq", "wk", "wv", "wo"):
            out.append((p + "attn." + w, (D, DK if w in ("wk", "wv") else D)))
        if cfg.bias:
            for b in ("bq", "bk", "bv", "bo"):
                out.append((p + "attn." + b, (DK if b in ("bk", "bv") else D,)))
        out.append((p + "norm2.weight", (D,)))
        if ln:
            out.append((p + "norm2.bias", (D,)))
        out.append((p + "ffn.w1", (D, F)))
        if cfg.bias:
            out.append((p + "ffn.b1", (F,)))
        out.append((p + "ffn.w2", (F, D)))
        if cfg.bias:
            out.append((p + "ffn.b2", (D,)))
        if cfg.ffn == "gated":
            out.append((p + "ffn.w3", (D, F)))
            if cfg.bias:
                out.append((p + "ffn.b3", (F,)))
    out.append(("norm_f.weight", (D,)))
    if ln:
        out.append(("norm_f.bias", (D,)))
    if not cfg.tied:
        out.append(("lm_head.weight", (D, V)))
    return out


# ----------------------------------------------------------------------------- the computation
def layer_norm(x, g, b, eps):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # biased variance
    return (x - mean) / torch.sqrt(var + eps) * g + b


def rms_norm(x, g, eps):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * g


def norm(cfg, P, prefix, x):
    if cfg.norm == "layernorm":
        return layer_norm(x, P[prefix + ".weight"], P[prefix + ".bias"], cfg.norm_eps)
    return rms_norm(x, P[prefix + ".weight"], cfg.norm_eps)


def activation(kind, x):
    if kind == "relu":
        return torch.clamp(x, min=0.0)
    if kind == "gelu":
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if kind == "gelu_tanh":
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if kind == "silu":
        return x / (1.0 + torch.exp(-x))
    raise ValueError(kind)


def sinusoidal(T, D, dtype):
    """PE[t, 2i] = sin(t / 10000^(2i/D)), PE[t, 2i+1] = cos(t / 10000^(2i/D)), computed in float64."""
    t = torch.arange(T, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, D, 2, dtype=torch.float64)[None, :]  # 2i
    angle = t / torch.pow(torch.tensor(10000.0, dtype=torch.float64), i2 / D)
    pe = torch.zeros(T, D, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.to(dtype)


def rope(x, base=10000.0, pairs="adjacent"):
    """x: (B, H, T, dk). Rotate pairs (2i, 2i+1) (adjacent) or (i, i + dk/2) (halves: Hugging Face's
    rotate_half) by t * w_i, w_i = base^(-2i/dk)."""
    T, dk = x.shape[-2], x.shape[-1]
    t = torch.arange(T, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, dk, 2, dtype=torch.float64)[None, :]
    omega = torch.pow(torch.tensor(float(base), dtype=torch.float64), -i2 / dk)
    ang = t * omega  # (T, dk/2)
    cos, sin = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
    if pairs == "halves":
        x0, x1 = x[..., : dk // 2], x[..., dk // 2:]
        return torch.cat((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    r0 = x0 * cos - x1 * sin
    r1 = x0 * sin + x1 * cos
    return torch.stack((r0, r1), dim=-1).reshape(x.shape)


def attention(cfg, P, prefix, a, padding):
    B, T, D = a.shape
    H, KV = cfg.n_heads, cfg.kv
    dk = D // H

    def proj(w, b, heads):
        y = a @ P[prefix + w]
        if cfg.bias:
            y = y + P[prefix + b]
        y = y.reshape(B, T, heads, dk).transpose(1, 2)  # (B, heads, T, dk)
        return y.repeat_interleave(H // heads, dim=1)  # head h uses key/value head h // (H / KV)

    q, k, v = proj("wq", "bq", H), proj("wk", "bk", KV), proj("wv", "bv", KV)
    if cfg.position == "rope":
        q, k = rope(q, cfg.rope_theta, cfg.rope_pairs), rope(k, cfg.rope_theta, cfg.rope_pairs)
    s = q @ k.transpose(-1, -2) / math.sqrt(dk)  # (B, H, T, T)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=a.device))
    if padding is None:
        allowed = causal[None, None]
    else:
        allowed = causal[None, None] & ~padding.bool()[:, None, None, :]  # key j not padding
    has_key = allowed.any(dim=-1, keepdim=True)  # (B, 1, T, 1)
    s = s.masked_fill(~allowed, float("-inf"))
    s = s.masked_fill(~has_key, 0.0)  # rows with no allowed key: finite, then zeroed below
    p = torch.softmax(s, dim=-1) * has_key.to(s.dtype)
    o = (p @ v).transpose(1, 2).reshape(B, T, D)  # heads concatenated in order
    y = o @ P[prefix + "wo"]
    if cfg.bias:
        y = y + P[prefix + "bo"]
    return y


def ffn(cfg, P, prefix, f, observe=None):
    h = f @ P[prefix + "w1"]
    if cfg.bias:
        h = h + P[prefix + "b1"]
    if observe is not None:
        observe(prefix + "pre_activation", h)
    h = activation(cfg.activation, h)
    if cfg.ffn == "gated":  # SwiGLU with silu: act(x W1 + b1) * (x W3 + b3)
        g = f @ P[prefix + "w3"]
        if cfg.bias:
            g = g + P[prefix + "b3"]
        h = h * g
    y = h @ P[prefix + "w2"]
    if cfg.bias:
        y = y + P[prefix + "b2"]
    return y


def forward(cfg, P, tokens, padding=None, observe=None):
    """Logits (B, T, V) in the dtype of the parameters ``P`` (a map of docs/model.md names to tensors).
    ``tokens``: integer (B, T), T <= context; ``padding``: optional (B, T), nonzero = padding token
    (never attended to). ``observe(name, tensor)``, if given, sees each FFN's input to its activation."""
    B, T = tokens.shape
    x = P["tok_emb.weight"][tokens.long()]
    dtype = x.dtype
    if cfg.position == "learned":
        x = x + P["pos_emb.weight"][:T]
    elif cfg.position == "sinusoidal":
        x = x + sinusoidal(T, cfg.d_model, dtype).to(x.device)
    for l in range(cfg.n_layers):
        p = f"blocks.{l}."
        x = x + attention(cfg, P, p + "attn.", norm(cfg, P, p + "norm1", x), padding)
        x = x + ffn(cfg, P, p + "ffn.", norm(cfg, P, p + "norm2", x), observe)
    h = norm(cfg, P, "norm_f", x)
    w_head = P["tok_emb.weight"].t() if cfg.tied else P["lm_head.weight"]
    return h @ w_head


def loss_fn(logits, targets):
    """Mean over non-ignored positions (target != -1) of -log softmax(logits)[target]."""
    logp = torch.log_softmax(logits, dim=-1)
    t = targets.long()
    keep = t != -1
    picked = logp.gather(-1, t.clamp(min=0)[..., None])[..., 0]
    return -(picked * keep.to(logp.dtype)).sum() / keep.sum()


# ----------------------------------------------------------------------------- the nn.Module
class _Params(nn.Module):
    """A module holding parameters under given names, so that state_dict() spells docs/model.md's names."""

    def __init__(self, shapes):
        super().__init__()
        for name, shape in shapes:
            self.register_parameter(name, nn.Parameter(torch.empty(shape)))


class _Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        D, F, DK = cfg.d_model, cfg.d_ff, cfg.kv * cfg.d_k
        ln = cfg.norm == "layernorm"
        self.norm1 = _Params([("weight", (D,))] + ([("bias", (D,))] if ln else []))
        self.attn = _Params([(w, (D, DK if w in ("wk", "wv") else D)) for w in ("wq", "wk", "wv", "wo")] +
                            ([(b, (DK if b in ("bk", "bv") else D,)) for b in ("bq", "bk", "bv", "bo")]
                             if cfg.bias else []))
        self.norm2 = _Params([("weight", (D,))] + ([("bias", (D,))] if ln else []))
        self.ffn = _Params([("w1", (D, F))] + ([("b1", (F,))] if cfg.bias else []) +
                           [("w2", (F, D))] + ([("b2", (D,))] if cfg.bias else []) +
                           ([("w3", (D, F))] + ([("b3", (F,))] if cfg.bias else []) if cfg.ffn == "gated" else []))


class StaticformerLM(nn.Module):
    """docs/model.md's decoder as a PyTorch module. ``state_dict()`` has exactly the checkpoint's names and
    shapes (``tok_emb.weight``, ``blocks.0.attn.wq`` ``[D, D]`` as ``[in, out]``, ...), so a
    checkpoint loads with ``load_state_dict`` and saves with :meth:`save`.

    ``metadata`` keeps a checkpoint's other ``__metadata__`` entries (for example examples/train's
    ``tokenizer.vocab``); :meth:`save` writes them back."""

    def __init__(self, config, seed=None, std=0.02):
        super().__init__()
        cfg = config
        self.config = cfg
        self.metadata = {}
        self.tok_emb = _Params([("weight", (cfg.vocab, cfg.d_model))])
        if cfg.position == "learned":
            self.pos_emb = _Params([("weight", (cfg.context, cfg.d_model))])
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layers))
        self.norm_f = _Params([("weight", (cfg.d_model,))] + ([("bias", (cfg.d_model,))] if cfg.norm == "layernorm" else []))
        if not cfg.tied:
            self.lm_head = _Params([("weight", (cfg.d_model, cfg.vocab))])
        assert [(n, tuple(p.shape)) for n, p in self.named_parameters()] == param_shapes(cfg)
        self.reset_parameters(seed, std)

    @torch.no_grad()
    def reset_parameters(self, seed=None, std=0.02):
        """GPT-2-style initialisation, as sf::init_params: matrices ~ N(0, std) (wo and w2 scaled by
        1/sqrt(2L)), norm gains 1, biases 0 (PyTorch's generator: not the same numbers as C++'s)."""
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        resid = std / math.sqrt(2.0 * self.config.n_layers)
        for name, p in self.named_parameters():
            if p.dim() == 1:
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            else:
                s = resid if name.endswith(".wo") or name.endswith(".w2") else std
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * s)

    def forward(self, tokens, targets=None, padding=None):
        """Logits (B, T, V) for integer ``tokens`` (B, T); with ``targets`` (B, T, -1 = ignore),
        ``(logits, loss)``. ``padding`` (B, T, nonzero = padding) masks keys as docs/model.md says."""
        if tokens.shape[-1] > self.config.context:
            raise ValueError(f"{tokens.shape[-1]} positions: the context is {self.config.context}")
        logits = forward(self.config, dict(self.named_parameters()), tokens, padding)
        if targets is None:
            return logits
        return logits, loss_fn(logits, targets)

    def save(self, path, metadata=None):
        """Writes the model as a staticformer checkpoint (F32, docs/model.md's names and ``__metadata__``,
        plus ``self.metadata`` and ``metadata``)."""
        save(self, path, metadata)

    @classmethod
    def load(cls, path, dtype=torch.float32):
        return load(path, dtype)

    def extra_repr(self):
        return self.config.describe()


def save(model, path, metadata=None):
    """Writes a :class:`StaticformerLM` as a staticformer checkpoint."""
    meta = dict(getattr(model, "metadata", {}) or {})
    meta.update(metadata or {})
    meta.update(model.config.metadata())  # the configuration always wins
    sd = model.state_dict()
    tensors = [(n, sd[n].detach().cpu().to(torch.float32).numpy()) for n, _ in param_shapes(model.config)]
    write_safetensors(path, tensors, meta)


def load(path, dtype=torch.float32):
    """A :class:`StaticformerLM` with the configuration and parameters of a staticformer checkpoint.
    Every name, dtype and shape is checked; other metadata is kept in ``model.metadata``."""
    tensors, meta = read_safetensors(path)
    try:
        cfg = Config.from_metadata(meta)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    expected = param_shapes(cfg)
    names = {n for n, _ in expected}
    for name in tensors:
        if name not in names:
            raise ValueError(f"{path}: unexpected tensor '{name}' for {cfg.describe()}")
    state = {}
    for name, shape in expected:
        if name not in tensors:
            raise ValueError(f"{path}: missing tensor '{name}'")
        t = tensors[name]
        if t.dtype != np.float32:
            raise ValueError(f"{path}: tensor '{name}': expected dtype F32, found {t.dtype}")
        if tuple(t.shape) != tuple(shape):
            raise ValueError(f"{path}: tensor '{name}': expected shape {list(shape)}, found {list(t.shape)}")
        state[name] = torch.from_numpy(t)
    model = StaticformerLM(cfg)
    model.load_state_dict(state)
    model.metadata = {k: v for k, v in meta.items() if k not in cfg.metadata()}
    return model.to(dtype)
