"""Conversions between staticformer checkpoints and the PyTorch layouts users have.

    model = from_nanogpt(state_dict, n_heads=4)                  # nanoGPT's GPT (nn.Linear [out, in])
    model = from_hf_gpt2(state_dict, hf_config)                  # Hugging Face GPT2LMHeadModel (Conv1D [in, out])
    model = from_hf_llama(state_dict, hf_config)                 # LlamaForCausalLM (SwiGLU, grouped-query), or a plain MLP
    model = from_llama2c(state_dict, model_args)                 # llama2.c's model.py Transformer (its ckpt.pt)
    model.save("m.safetensors")

    state_dict, model_args = to_nanogpt(model)
    state_dict, hf_config = to_hf_gpt2(model)
    state_dict, hf_config = to_hf_llama(model)                   # LlamaForCausalLM loads it (gated models)
    state_dict, model_args = to_llama2c(model)                   # llama2.c's Transformer(ModelArgs(**model_args))

Every ``from_*`` returns a :class:`~staticformer.model.StaticformerLM` whose logits equal the source
model's (same arithmetic up to float32 rounding); whatever cannot be represented exactly is refused
with :class:`UnsupportedFeature`, whose message names the first such feature. ``hf_config`` is the
model's ``config.json`` as a dict (optional where the state dict and the arguments say enough).

What is exact and why:

* nanoGPT's ``nn.Linear`` computes ``x W^T`` with ``W`` ``[out, in]``; Hugging Face's ``Conv1D``
  computes ``x W`` with ``W`` ``[in, out]``, which is docs/model.md's orientation. ``c_attn`` holds q, k, v
  side by side along ``out``.
* Biases docs/model.md has no place for are zeros (nanoGPT's ``bias=False`` LayerNorm, LLaMA's attention bias
  without an MLP bias): zeros are exact.
* RoPE: Hugging Face's LLaMA rotates the halves of each head (``rotate_half``: dimension ``i`` with
  ``i + d_k/2``, both at angle ``t * w_i``) where docs/model.md's default (``rope_pairs`` ``adjacent``, as Meta's
  and llama2.c's code) rotates adjacent pairs ``(2i, 2i+1)`` at the same angle, with the same
  ``w_i = rope_theta^(-2i/d_k)``. Reordering the output features of ``q_proj`` and ``k_proj`` within each head
  (each query head and each key/value head), docs/model.md's ``2i <- i`` and ``2i+1 <- i + d_k/2``, turns one
  into the other; scores are dot products of q and k, unchanged by reordering both the same way. See
  :func:`rope_permutation`. ``from_hf_llama(..., rope_pairs="halves")`` keeps the rows as stored and
  writes ``rope_pairs = halves`` instead (what the C++ reader of Hugging Face directories does).
* SwiGLU: ``down(act(gate(x)) * up(x))`` is docs/model.md's ``ffn = gated``: ``w1`` the gate, ``w3`` the up
  projection, ``w2`` the down one (llama2.c's ``w2(silu(w1(x)) * w3(x))`` with the same names).
* Grouped-query attention: ``k_proj`` / ``v_proj`` of ``kv * d_k`` rows are docs/model.md's ``wk`` / ``wv``
  ``[D, kv * d_k]`` (``n_kv_heads``); query head ``h`` reads key/value head ``h // (H / kv)`` in all three
  (``repeat_kv``), so nothing is reordered across heads.
"""
import torch

from .model import Config, StaticformerLM, param_shapes

__all__ = ["ConversionError", "UnsupportedFeature", "from_nanogpt", "from_hf_gpt2", "from_hf_llama", "from_llama2c",
           "to_nanogpt", "to_hf_gpt2", "to_hf_llama", "to_llama2c", "rope_permutation", "LAYOUTS"]

LAYOUTS = ("nanogpt", "hf-gpt2", "hf-llama", "llama2c")


class ConversionError(ValueError):
    """The input is not what the layout says (a missing tensor, a wrong shape, a missing setting)."""


class UnsupportedFeature(ConversionError):
    """The model uses something docs/model.md's model cannot represent; ``feature`` names it."""

    def __init__(self, feature, detail=""):
        self.feature = feature
        super().__init__(f"unsupported feature: {feature}" + (f": {detail}" if detail else ""))


# ----------------------------------------------------------------------------- helpers
def rope_permutation(n_heads, d_k):
    """Index ``perm`` such that docs/model.md's feature ``s`` of q (or k) is Hugging Face's feature ``perm[s]``:
    within each head, docs/model.md's ``2i`` is HF's ``i`` and docs/model.md's ``2i+1`` is HF's ``i + d_k/2``."""
    if d_k % 2:
        raise ValueError(f"RoPE needs an even head size, found {d_k}")
    half = d_k // 2
    idx = []
    for h in range(n_heads):
        for i in range(half):
            idx += [h * d_k + i, h * d_k + half + i]
    return torch.tensor(idx, dtype=torch.long)


_ACT_FROM_HF = {"relu": "relu", "gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
                "gelu_fast": "gelu_tanh", "swish": "silu"}


def _activation(name, source):
    if name in ACTIVATION_NAMES:
        return name
    if name in _ACT_FROM_HF:
        return _ACT_FROM_HF[name]
    raise UnsupportedFeature(f"activation '{name}'",
                             f"{source}; staticformer has relu, gelu (erf), gelu_tanh "
                             f"(Hugging Face's gelu_new / gelu_pytorch_tanh) and silu (swish)")


ACTIVATION_NAMES = ("relu", "gelu", "gelu_tanh", "silu")


class _Source:
    """A state dict being read: shape-checked access, and the names not used at the end."""

    def __init__(self, state_dict, layout, ignore=()):
        sd = {}
        for k, v in state_dict.items():
            if k.startswith("_orig_mod."):  # torch.compile's wrapper (nanoGPT checkpoints made with compile=True)
                k = k[len("_orig_mod."):]
            if not torch.is_tensor(v):
                v = torch.as_tensor(v)
            sd[k] = v.detach().cpu()
        self.sd, self.layout, self.ignore, self.used = sd, layout, ignore, set()

    def has(self, name):
        return name in self.sd

    def get(self, name, shape, what=""):
        if name not in self.sd:
            raise ConversionError(f"{self.layout}: missing tensor '{name}'" + (f" ({what})" if what else ""))
        t = self.sd[name]
        if tuple(t.shape) != tuple(shape):
            raise ConversionError(f"{self.layout}: tensor '{name}': expected shape {list(shape)}"
                                  + (f" ({what})" if what else "") + f", found {list(t.shape)}")
        if not t.is_floating_point():
            raise ConversionError(f"{self.layout}: tensor '{name}': expected floating point, found {t.dtype}")
        self.used.add(name)
        return t.to(torch.float32)

    def opt(self, name, shape, what=""):
        return self.get(name, shape, what) if name in self.sd else None

    def finish(self):
        for k in self.sd:
            if k not in self.used and not any(k.endswith(s) for s in self.ignore):
                raise ConversionError(f"{self.layout}: unexpected tensor '{k}' (not part of the layout staticformer "
                                      f"converts; the model may have a feature staticformer's model does not)")


def _count_layers(src, fmt):
    L = 0
    while src.has(fmt.format(L)):
        L += 1
    if L == 0:
        raise ConversionError(f"{src.layout}: no '{fmt.format(0)}': no decoder blocks")
    return L


def _tied(src, head_name, emb, cfg_says_tied):
    """(tied, lm_head [D, V] or None). A head equal to the embedding is tied."""
    if not src.has(head_name):
        if cfg_says_tied is False:
            raise ConversionError(f"{src.layout}: missing tensor '{head_name}' (the config says tie_word_embeddings = false)")
        return True, None
    w = src.get(head_name, emb.shape, "[vocab, d_model]")
    if torch.equal(w, emb):
        return True, None
    if cfg_says_tied:  # the source module would use the embedding as its head, whatever the file holds
        raise ConversionError(f"{src.layout}: the config says tie_word_embeddings = true, but '{head_name}' is "
                              "not the embedding")
    return False, w.t()


def _build(cfg, params):
    model = StaticformerLM(cfg)
    names = [n for n, _ in param_shapes(cfg)]
    model.load_state_dict({n: params[n].contiguous() for n in names})
    return model


def _zeros(n):
    return torch.zeros(n, dtype=torch.float32)


def _merge_args(hf_config, key, value):
    """An explicit argument or, if None, the config's value."""
    if value is not None:
        return value
    if hf_config and hf_config.get(key) is not None:
        return hf_config[key]
    return None


# ----------------------------------------------------------------------------- GPT-2: nanoGPT and Hugging Face
def _from_gpt2(state_dict, conv1d, n_heads, activation, norm_eps, tie_word_embeddings, layout):
    src = _Source(state_dict, layout, ignore=(".attn.bias", ".attn.masked_bias"))  # causal-mask buffers
    for k in src.sd:
        if "crossattention" in k or "ln_cross_attn" in k:
            raise UnsupportedFeature("cross-attention", f"tensor '{k}'")
    pre = "transformer." if src.has("transformer.wte.weight") else ""
    if not src.has(pre + "wte.weight"):
        raise ConversionError(f"{layout}: no 'transformer.wte.weight' (or 'wte.weight'): not a GPT-2 state dict")
    V, D = src.sd[pre + "wte.weight"].shape
    wte = src.get(pre + "wte.weight", (V, D))
    if not src.has(pre + "wpe.weight"):
        raise ConversionError(f"{layout}: no '{pre}wpe.weight' (learned positions)")
    T = src.sd[pre + "wpe.weight"].shape[0]
    wpe = src.get(pre + "wpe.weight", (T, D))
    L = _count_layers(src, pre + "h.{}.ln_1.weight")
    if n_heads is None:
        raise ConversionError(f"{layout}: the number of heads is not in a state dict: give n_heads "
                              "(--n-heads, nanoGPT's ckpt.pt model_args, or config.json)")
    if D % n_heads:
        raise ConversionError(f"{layout}: d_model {D} is not divisible by n_heads {n_heads}")

    def lin(name, n_in, n_out):  # -> [in, out]
        key = name + ".weight"
        if conv1d:
            if src.has(key) and tuple(src.sd[key].shape) == (n_out, n_in) and n_in != n_out:
                raise ConversionError(f"{layout}: tensor '{key}' is [out, in] = {[n_out, n_in]}, nn.Linear's "
                                      "orientation: this looks like nanoGPT's layout (--from nanogpt)")
            return src.get(key, (n_in, n_out), "Conv1D [in, out]")
        if src.has(key) and tuple(src.sd[key].shape) == (n_in, n_out) and n_in != n_out:
            raise ConversionError(f"{layout}: tensor '{key}' is [in, out] = {[n_in, n_out]}, Conv1D's "
                                  "orientation: this looks like Hugging Face's layout (--from hf-gpt2)")
        return src.get(key, (n_out, n_in), "nn.Linear [out, in]").t()

    h0 = pre + "h.0."
    fc = src.sd.get(h0 + "mlp.c_fc.weight")
    if fc is None or fc.dim() != 2:
        raise ConversionError(f"{layout}: missing tensor '{h0}mlp.c_fc.weight'")
    F = fc.shape[1] if conv1d else fc.shape[0]
    has_bias = any(src.has(h0 + n) for n in ("attn.c_attn.bias", "attn.c_proj.bias", "mlp.c_fc.bias", "mlp.c_proj.bias"))
    P = {"tok_emb.weight": wte, "pos_emb.weight": wpe}
    for l in range(L):
        h, b = f"{pre}h.{l}.", f"blocks.{l}."
        P[b + "norm1.weight"] = src.get(h + "ln_1.weight", (D,))
        P[b + "norm1.bias"] = src.opt(h + "ln_1.bias", (D,))
        w = lin(h + "attn.c_attn", D, 3 * D)
        P[b + "attn.wq"], P[b + "attn.wk"], P[b + "attn.wv"] = w[:, :D], w[:, D:2 * D], w[:, 2 * D:]
        P[b + "attn.wo"] = lin(h + "attn.c_proj", D, D)
        P[b + "norm2.weight"] = src.get(h + "ln_2.weight", (D,))
        P[b + "norm2.bias"] = src.opt(h + "ln_2.bias", (D,))
        P[b + "ffn.w1"] = lin(h + "mlp.c_fc", D, F)
        P[b + "ffn.w2"] = lin(h + "mlp.c_proj", F, D)
        if has_bias:
            qkv = src.opt(h + "attn.c_attn.bias", (3 * D,))
            qkv = _zeros(3 * D) if qkv is None else qkv
            P[b + "attn.bq"], P[b + "attn.bk"], P[b + "attn.bv"] = qkv[:D], qkv[D:2 * D], qkv[2 * D:]
            for name, n, key in (("attn.bo", D, "attn.c_proj.bias"), ("ffn.b1", F, "mlp.c_fc.bias"),
                                 ("ffn.b2", D, "mlp.c_proj.bias")):
                t = src.opt(h + key, (n,))
                P[b + name] = _zeros(n) if t is None else t
        for nb in ("norm1.bias", "norm2.bias"):
            if P[b + nb] is None:  # nanoGPT's LayerNorm(bias=False)
                P[b + nb] = _zeros(D)
    P["norm_f.weight"] = src.get(pre + "ln_f.weight", (D,))
    lnf = src.opt(pre + "ln_f.bias", (D,))
    P["norm_f.bias"] = _zeros(D) if lnf is None else lnf
    tied, head = _tied(src, "lm_head.weight", wte, tie_word_embeddings)
    if head is not None:
        P["lm_head.weight"] = head
    src.finish()
    cfg = Config(vocab=V, context=T, d_model=D, n_heads=n_heads, n_layers=L, d_ff=F, norm="layernorm",
                 position="learned", activation=activation, tied=tied, bias=has_bias, norm_eps=norm_eps)
    return _build(cfg, P)


def from_nanogpt(state_dict, n_heads=None, model_args=None, activation=None, norm_eps=None):
    """A model in nanoGPT's layout (karpathy/nanoGPT ``model.py``: ``transformer.wte``, ``wpe``,
    ``h.{l}.ln_1``, fused ``attn.c_attn`` and ``attn.c_proj``, ``mlp.c_fc``, ``mlp.c_proj``, ``ln_f``,
    ``lm_head``; ``nn.Linear`` weights ``[out, in]``). ``model_args`` is ckpt.pt's dict of the same
    name (gives ``n_head``). nanoGPT's MLP uses ``nn.GELU()``, the erf form: ``activation`` defaults
    to ``gelu``; give ``gelu_tanh`` or ``relu`` if your copy of nanoGPT changed it. LayerNorm eps
    1e-5 (``F.layer_norm``'s default)."""
    n_heads = n_heads if n_heads is not None else (model_args or {}).get("n_head")
    act = _activation(activation or "gelu", "nanoGPT")
    return _from_gpt2(state_dict, False, n_heads, act, 1e-5 if norm_eps is None else norm_eps, None, "nanogpt")


def from_hf_gpt2(state_dict, hf_config=None, n_heads=None, activation=None, norm_eps=None):
    """A model in Hugging Face's GPT-2 layout (``GPT2LMHeadModel``: ``transformer.`` prefix, or
    ``GPT2Model`` without it; ``Conv1D`` weights ``[in, out]``). ``hf_config``: config.json as a dict
    (``n_head``, ``activation_function`` (default ``gelu_new``, the tanh form), ``layer_norm_epsilon``)."""
    c = hf_config or {}
    if c.get("model_type") not in (None, "gpt2"):
        raise UnsupportedFeature(f"model_type '{c['model_type']}'", "the hf-gpt2 layout reads GPT-2 models")
    if c.get("scale_attn_weights") is False:
        raise UnsupportedFeature("scale_attn_weights = false", "staticformer's scores are divided by sqrt(d_k)")
    if c.get("scale_attn_by_inverse_layer_idx"):
        raise UnsupportedFeature("scale_attn_by_inverse_layer_idx", "staticformer's scores are divided by sqrt(d_k) only")
    if c.get("add_cross_attention"):
        raise UnsupportedFeature("cross-attention", "add_cross_attention = true")
    n_heads = _merge_args(c, "n_head", n_heads)
    act = _activation(activation or c.get("activation_function") or "gelu_new", "config.json activation_function")
    eps = _merge_args(c, "layer_norm_epsilon", norm_eps)
    return _from_gpt2(state_dict, True, n_heads, act, 1e-5 if eps is None else float(eps),
                      c.get("tie_word_embeddings"), "hf-gpt2")


# ----------------------------------------------------------------------------- LLaMA: Hugging Face and llama2.c
def _inverse(perm):
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(len(perm))
    return inv


def _kv_heads(src, name, D, d_k, n_heads, said, layout, said_what):
    """The key/value heads from the rows of k_proj / wk ([kv * d_k, D]), checked against the config's."""
    k = src.sd.get(name)
    if k is None or k.dim() != 2:
        raise ConversionError(f"{layout}: missing tensor '{name}'")
    rows = k.shape[0]
    if rows % d_k or rows == 0 or n_heads % (rows // d_k):
        raise ConversionError(f"{layout}: tensor '{name}' has {rows} rows: not a whole number of key/value heads "
                              f"of {d_k} (d_model {D} / {n_heads} heads) dividing the {n_heads} heads")
    kv = rows // d_k
    if said is not None and int(said) != kv:
        raise ConversionError(f"{layout}: {said_what} is {said}, but '{name}' has {rows} rows = {kv} heads of {d_k}")
    return kv


def _check_rope_config(c, D, n_heads):
    """Refusals of RoPE variants docs/model.md does not have; returns rope_theta."""
    theta = c.get("rope_theta", 10000.0)
    if theta is None:
        theta = 10000.0
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 0 < float(theta) < float("inf"):
        raise ConversionError(f"hf-llama: rope_theta is {theta!r}: expected a positive number")
    rs = c.get("rope_scaling")
    if rs and not (isinstance(rs, dict) and rs.get("rope_type", rs.get("type")) == "default" and len(rs) == 1):
        raise UnsupportedFeature("rope_scaling", f"{rs}; staticformer's RoPE angle is t * w_i, w_i = rope_theta^(-2i/d_k)")
    if c.get("partial_rotary_factor", 1.0) != 1.0:
        raise UnsupportedFeature("partial_rotary_factor", "staticformer rotates every dimension of a head")
    if c.get("head_dim") not in (None, D // n_heads):
        raise UnsupportedFeature(f"head_dim = {c['head_dim']}", f"staticformer's d_k is d_model / n_heads = {D // n_heads}")
    if c.get("sliding_window") and c.get("use_sliding_window", True):
        raise UnsupportedFeature("sliding-window attention", f"sliding_window = {c['sliding_window']}")
    return float(theta)


def from_hf_llama(state_dict, hf_config=None, n_heads=None, context=None, activation=None, norm_eps=None,
                  rope_pairs="adjacent"):
    """A model in Hugging Face's LLaMA layout (transformers' ``LlamaForCausalLM``: ``model.embed_tokens``,
    ``model.layers.{l}.input_layernorm``, ``self_attn.{q,k,v,o}_proj``, ``post_attention_layernorm``,
    ``mlp.{gate,up,down}_proj``, ``model.norm``, ``lm_head``; ``nn.Linear`` ``[out, in]``; RMSNorm; RoPE
    rotating halves; ``LlamaModel`` without the ``model.`` prefix too).

    * The MLP: LLaMA's gated one, ``down(act(gate(x)) * up(x))`` (SwiGLU with ``silu``), becomes
      ``ffn = gated`` (``w1`` = gate, ``w3`` = up, ``w2`` = down); a plain ``down(act(up(x)))`` without
      ``gate_proj`` becomes ``ffn = mlp``.
    * Grouped-query attention: the key/value heads are ``k_proj``'s rows / d_k (``num_key_value_heads``, if
      given, must agree), any number dividing the heads; they become ``n_kv_heads``.
    * RoPE: ``rope_pairs="adjacent"`` (the default) permutes the rows of ``q_proj`` and ``k_proj`` within
      each head to docs/model.md's adjacent pairs (:func:`rope_permutation`); ``"halves"`` keeps them and
      writes ``rope_pairs = halves``. Either is exact. ``rope_theta`` (default 10000) is kept.
    * Biases: ``attention_bias`` / ``mlp_bias`` tensors; those docs/model.md has with no counterpart in the
      file (attention biases without MLP ones, or the reverse) are zeros.
    * ``tie_word_embeddings``: a head equal to the embedding, or absent, is tied.

    Settings come from ``hf_config`` (config.json) or the arguments: ``num_attention_heads``,
    ``max_position_embeddings`` (the context), ``hidden_act``, ``rms_norm_eps`` (default 1e-6 when
    neither gives it: LlamaConfig's default, as the C++ reader's), ``rope_theta``. Refused (:class:`UnsupportedFeature`): ``rope_scaling``, a ``head_dim``
    other than hidden_size / heads, partial rotary, sliding windows, activations other than relu, gelu,
    gelu_new / gelu_pytorch_tanh and silu, and any tensor the layout does not name (a ``q_norm``, say)."""
    c = hf_config or {}
    if rope_pairs not in ("adjacent", "halves"):
        raise ValueError(f"rope_pairs: expected adjacent or halves, found {rope_pairs!r}")
    src = _Source(state_dict, "hf-llama", ignore=("rotary_emb.inv_freq",))
    pre = "model." if src.has("model.embed_tokens.weight") else ""
    if not src.has(pre + "embed_tokens.weight"):
        raise ConversionError("hf-llama: no 'model.embed_tokens.weight' (or 'embed_tokens.weight'): "
                              "not a LLaMA-style state dict")
    V, D = src.sd[pre + "embed_tokens.weight"].shape
    n_heads = _merge_args(c, "num_attention_heads", n_heads)
    if n_heads is None:
        raise ConversionError("hf-llama: the number of heads is not in a state dict: give n_heads "
                              "(--n-heads, or config.json's num_attention_heads)")
    n_heads = int(n_heads)
    theta = _check_rope_config(c, D, n_heads)
    act = activation or c.get("hidden_act")
    if act is None:
        raise ConversionError("hf-llama: the activation is not in a state dict: give activation "
                              "(--activation, or config.json's hidden_act)")
    act = _activation(act, "hidden_act")
    context = _merge_args(c, "max_position_embeddings", context)
    if context is None:
        raise ConversionError("hf-llama: the context length is not in a state dict: give context "
                              "(--context, or config.json's max_position_embeddings)")
    eps = _merge_args(c, "rms_norm_eps", norm_eps)
    eps = 1e-6 if eps is None else float(eps)  # (LlamaConfig's default; sf::io::hf_llama_config's too)
    if D % n_heads or (D // n_heads) % 2:
        raise ConversionError(f"hf-llama: d_model {D} / n_heads {n_heads} must be a whole, even head size")
    dk = D // n_heads
    l0 = pre + "layers.0."
    kv = _kv_heads(src, l0 + "self_attn.k_proj.weight", D, dk, n_heads, c.get("num_key_value_heads"), "hf-llama",
                   "num_key_value_heads")
    DK = kv * dk

    emb = src.get(pre + "embed_tokens.weight", (V, D))
    L = _count_layers(src, pre + "layers.{}.input_layernorm.weight")
    gated = src.has(l0 + "mlp.gate_proj.weight")
    up = src.sd.get(l0 + "mlp.up_proj.weight")
    if up is None or up.dim() != 2:
        raise ConversionError(f"hf-llama: missing tensor '{l0}mlp.up_proj.weight'")
    F = up.shape[0]
    has_bias = any(src.has(l0 + n + ".bias") for n in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                                       "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj",
                                                       "mlp.down_proj"))
    halves = rope_pairs == "halves"
    perm = {"q_proj": rope_permutation(n_heads, dk), "k_proj": rope_permutation(kv, dk)}
    P = {"tok_emb.weight": emb}
    for l in range(L):
        h, b = f"{pre}layers.{l}.", f"blocks.{l}."
        P[b + "norm1.weight"] = src.get(h + "input_layernorm.weight", (D,))
        for w, proj, rows in (("wq", "q_proj", D), ("wk", "k_proj", DK), ("wv", "v_proj", DK), ("wo", "o_proj", D)):
            W = src.get(h + f"self_attn.{proj}.weight", (rows, D), "nn.Linear [out, in]")
            rot = proj in perm and not halves
            P[b + "attn." + w] = (W[perm[proj]] if rot else W).t()
            if has_bias:
                bias = src.opt(h + f"self_attn.{proj}.bias", (rows,))
                bias = _zeros(rows) if bias is None else bias
                P[b + "attn.b" + w[1]] = bias[perm[proj]] if rot else bias
        P[b + "norm2.weight"] = src.get(h + "post_attention_layernorm.weight", (D,))
        mlp = (("w1", "b1", "gate_proj", F, D), ("w3", "b3", "up_proj", F, D)) if gated else \
            (("w1", "b1", "up_proj", F, D),)
        for w, bn, proj, n_out, n_in in mlp + (("w2", "b2", "down_proj", D, F),):
            P[b + "ffn." + w] = src.get(h + f"mlp.{proj}.weight", (n_out, n_in), "nn.Linear [out, in]").t()
            if has_bias:
                t = src.opt(h + f"mlp.{proj}.bias", (n_out,))
                P[b + "ffn." + bn] = _zeros(n_out) if t is None else t
    P["norm_f.weight"] = src.get(pre + "norm.weight", (D,))
    tied, head = _tied(src, "lm_head.weight", emb, c.get("tie_word_embeddings"))
    if head is not None:
        P["lm_head.weight"] = head
    src.finish()
    cfg = Config(vocab=V, context=int(context), d_model=D, n_heads=n_heads, n_layers=L, d_ff=F,
                 norm="rmsnorm", position="rope", activation=act, tied=tied, bias=has_bias, norm_eps=eps,
                 n_kv_heads=kv, ffn="gated" if gated else "mlp", rope_theta=theta, rope_pairs=rope_pairs)
    return _build(cfg, P)


def from_llama2c(state_dict, model_args=None, n_heads=None, context=None, norm_eps=None):
    """A model of llama2.c's ``model.py`` (``Transformer``: ``tok_embeddings``, ``layers.{l}.attention_norm``,
    ``attention.{wq,wk,wv,wo}``, ``ffn_norm``, ``feed_forward.{w1,w2,w3}``, ``norm``, ``output``;
    ``nn.Linear`` ``[out, in]``, no biases), as its train.py saves it: ``ckpt.pt`` = ``{"model": state dict,
    "model_args": ...}`` (``_orig_mod.`` of ``torch.compile`` removed; the ``attention.mask`` buffers of
    PyTorch < 2 ignored). RMSNorm, RoPE on adjacent pairs with base 10000 (``precompute_freqs_cis``'s default),
    SwiGLU ``w2(silu(w1(x)) * w3(x))``: ``ffn = gated``, ``activation = silu``, the same names. Grouped-query
    attention: the key/value heads are ``wk``'s rows / d_k. ``output`` equal to ``tok_embeddings`` (as
    model.py ties them), or absent, is tied.

    ``model_args`` (llama2.c's ``ModelArgs`` as a dict) gives ``n_heads``, ``n_kv_heads``, ``max_seq_len``
    (the context) and ``norm_eps`` (default 1e-5); the arguments override it."""
    a = dict(model_args or {})
    src = _Source(state_dict, "llama2c", ignore=(".attention.mask", "freqs_cos", "freqs_sin"))
    if not src.has("tok_embeddings.weight"):
        raise ConversionError("llama2c: no 'tok_embeddings.weight': not a state dict of llama2.c's Transformer")
    V, D = src.sd["tok_embeddings.weight"].shape
    n_heads = n_heads if n_heads is not None else a.get("n_heads")
    if n_heads is None:
        raise ConversionError("llama2c: the number of heads is not in a state dict: give n_heads "
                              "(--n-heads, or ckpt.pt's model_args)")
    n_heads = int(n_heads)
    context = context if context is not None else a.get("max_seq_len")
    if context is None:
        raise ConversionError("llama2c: the context length is not in a state dict: give context "
                              "(--context, or ckpt.pt's model_args max_seq_len)")
    eps = norm_eps if norm_eps is not None else a.get("norm_eps")
    eps = 1e-5 if eps is None else float(eps)
    if D % n_heads or (D // n_heads) % 2:
        raise ConversionError(f"llama2c: dim {D} / n_heads {n_heads} must be a whole, even head size")
    dk = D // n_heads
    kv = _kv_heads(src, "layers.0.attention.wk.weight", D, dk, n_heads, a.get("n_kv_heads"), "llama2c",
                   "model_args n_kv_heads")
    DK = kv * dk
    emb = src.get("tok_embeddings.weight", (V, D))
    L = _count_layers(src, "layers.{}.attention_norm.weight")
    for key, value in (("dim", D), ("vocab_size", V), ("n_layers", L)):
        if a.get(key) is not None and int(a[key]) != value:
            raise ConversionError(f"llama2c: model_args {key} is {a[key]}, but the state dict has {value}")
    w1 = src.sd.get("layers.0.feed_forward.w1.weight")
    if w1 is None or w1.dim() != 2:
        raise ConversionError("llama2c: missing tensor 'layers.0.feed_forward.w1.weight'")
    F = w1.shape[0]
    P = {"tok_emb.weight": emb}
    for l in range(L):
        h, b = f"layers.{l}.", f"blocks.{l}."
        P[b + "norm1.weight"] = src.get(h + "attention_norm.weight", (D,))
        for w, rows in (("wq", D), ("wk", DK), ("wv", DK), ("wo", D)):
            P[b + "attn." + w] = src.get(h + f"attention.{w}.weight", (rows, D), "nn.Linear [out, in]").t()
        P[b + "norm2.weight"] = src.get(h + "ffn_norm.weight", (D,))
        for w, n_out, n_in in (("w1", F, D), ("w2", D, F), ("w3", F, D)):
            P[b + "ffn." + w] = src.get(h + f"feed_forward.{w}.weight", (n_out, n_in), "nn.Linear [out, in]").t()
    P["norm_f.weight"] = src.get("norm.weight", (D,))
    tied, head = _tied(src, "output.weight", emb, None)
    if head is not None:
        P["lm_head.weight"] = head
    src.finish()
    cfg = Config(vocab=V, context=int(context), d_model=D, n_heads=n_heads, n_layers=L, d_ff=F, norm="rmsnorm",
                 position="rope", activation="silu", tied=tied, bias=False, norm_eps=eps, n_kv_heads=kv,
                 ffn="gated")
    return _build(cfg, P)


# ----------------------------------------------------------------------------- staticformer -> PyTorch layouts
def _params(model):
    return {n: p.detach().cpu().to(torch.float32) for n, p in model.state_dict().items()}


def _require(cfg, layout, **wanted):
    names = {"norm": "normalisation", "position": "positions", "activation": "activation", "ffn": "feed-forward"}
    for field, ok in wanted.items():
        v = getattr(cfg, field)
        if v not in ok:
            raise UnsupportedFeature(f"{names.get(field, field)} '{v}'", f"the {layout} layout has {' or '.join(ok)}")


def _require_gpt2(cfg, layout):
    """GPT-2's block: a plain MLP and one key/value head per query head."""
    if cfg.ffn != "mlp":
        raise UnsupportedFeature(f"feed-forward '{cfg.ffn}' (SwiGLU's w3)", f"the {layout} layout's MLP is c_fc then c_proj")
    if cfg.n_kv_heads:
        raise UnsupportedFeature(f"grouped-query attention ({cfg.n_kv_heads} key/value heads for {cfg.n_heads})",
                                 f"the {layout} layout's c_attn holds q, k and v of {cfg.n_heads} heads each")


def to_nanogpt(model):
    """``(state_dict, model_args)`` for nanoGPT's ``GPT`` (``GPTConfig(**model_args)``, then
    ``load_state_dict``). nanoGPT's model is LayerNorm, learned positions, ``nn.GELU()`` (erf),
    d_ff = 4 d_model, tied head, a plain MLP, one key/value head per head: other models are refused."""
    cfg, P = model.config, _params(model)
    _require(cfg, "nanogpt", norm=("layernorm",), position=("learned",), activation=("gelu",))
    _require_gpt2(cfg, "nanogpt")
    D, L = cfg.d_model, cfg.n_layers
    if cfg.d_ff != 4 * D:
        raise UnsupportedFeature(f"d_ff = {cfg.d_ff}", f"nanoGPT's MLP is 4 * n_embd = {4 * D} wide")
    if not cfg.tied:
        raise UnsupportedFeature("an untied lm_head", "nanoGPT ties lm_head to wte")
    # nanoGPT's bias flag covers the LayerNorms too: LayerNorm biases need bias=True (then zero linear biases).
    ln_bias = any(P[n].abs().max() > 0 for n in P if n.endswith("norm1.bias") or n.endswith("norm2.bias")
                  or n == "norm_f.bias")
    bias = cfg.bias or ln_bias
    sd = {"transformer.wte.weight": P["tok_emb.weight"], "transformer.wpe.weight": P["pos_emb.weight"]}
    for l in range(L):
        h, b = f"transformer.h.{l}.", f"blocks.{l}."
        sd[h + "ln_1.weight"] = P[b + "norm1.weight"]
        if bias:
            sd[h + "ln_1.bias"] = P[b + "norm1.bias"]
        sd[h + "attn.c_attn.weight"] = torch.cat([P[b + "attn.wq"], P[b + "attn.wk"], P[b + "attn.wv"]], 1).t()
        if bias:
            sd[h + "attn.c_attn.bias"] = (torch.cat([P[b + "attn.bq"], P[b + "attn.bk"], P[b + "attn.bv"]])
                                          if cfg.bias else _zeros(3 * D))
        sd[h + "attn.c_proj.weight"] = P[b + "attn.wo"].t()
        if bias:
            sd[h + "attn.c_proj.bias"] = P[b + "attn.bo"] if cfg.bias else _zeros(D)
        sd[h + "ln_2.weight"] = P[b + "norm2.weight"]
        if bias:
            sd[h + "ln_2.bias"] = P[b + "norm2.bias"]
        sd[h + "mlp.c_fc.weight"] = P[b + "ffn.w1"].t()
        if bias:
            sd[h + "mlp.c_fc.bias"] = P[b + "ffn.b1"] if cfg.bias else _zeros(cfg.d_ff)
        sd[h + "mlp.c_proj.weight"] = P[b + "ffn.w2"].t()
        if bias:
            sd[h + "mlp.c_proj.bias"] = P[b + "ffn.b2"] if cfg.bias else _zeros(D)
    sd["transformer.ln_f.weight"] = P["norm_f.weight"]
    if bias:
        sd["transformer.ln_f.bias"] = P["norm_f.bias"]
    sd["lm_head.weight"] = P["tok_emb.weight"]
    model_args = dict(n_layer=L, n_head=cfg.n_heads, n_embd=D, block_size=cfg.context, bias=bias,
                      vocab_size=cfg.vocab, dropout=0.0)
    return {k: v.contiguous() for k, v in sd.items()}, model_args


_ACT_TO_HF = {"relu": "relu", "gelu": "gelu", "gelu_tanh": "gelu_new", "silu": "silu"}


def to_hf_gpt2(model):
    """``(state_dict, config)`` in Hugging Face's ``GPT2LMHeadModel`` layout (``Conv1D`` ``[in, out]``)
    and its config.json. Needs LayerNorm, learned positions, a plain MLP and as many key/value heads as
    heads; a model without biases gets zero ones."""
    cfg, P = model.config, _params(model)
    _require(cfg, "hf-gpt2", norm=("layernorm",), position=("learned",))
    _require_gpt2(cfg, "hf-gpt2")
    D, F, L = cfg.d_model, cfg.d_ff, cfg.n_layers
    sd = {"transformer.wte.weight": P["tok_emb.weight"], "transformer.wpe.weight": P["pos_emb.weight"]}
    for l in range(L):
        h, b = f"transformer.h.{l}.", f"blocks.{l}."
        bias = (lambda n, k: P[b + n]) if cfg.bias else (lambda n, k: _zeros(k))
        sd[h + "ln_1.weight"], sd[h + "ln_1.bias"] = P[b + "norm1.weight"], P[b + "norm1.bias"]
        sd[h + "attn.c_attn.weight"] = torch.cat([P[b + "attn.wq"], P[b + "attn.wk"], P[b + "attn.wv"]], 1)
        sd[h + "attn.c_attn.bias"] = torch.cat([bias("attn.bq", D), bias("attn.bk", D), bias("attn.bv", D)])
        sd[h + "attn.c_proj.weight"], sd[h + "attn.c_proj.bias"] = P[b + "attn.wo"], bias("attn.bo", D)
        sd[h + "ln_2.weight"], sd[h + "ln_2.bias"] = P[b + "norm2.weight"], P[b + "norm2.bias"]
        sd[h + "mlp.c_fc.weight"], sd[h + "mlp.c_fc.bias"] = P[b + "ffn.w1"], bias("ffn.b1", F)
        sd[h + "mlp.c_proj.weight"], sd[h + "mlp.c_proj.bias"] = P[b + "ffn.w2"], bias("ffn.b2", D)
    sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"] = P["norm_f.weight"], P["norm_f.bias"]
    sd["lm_head.weight"] = P["tok_emb.weight"] if cfg.tied else P["lm_head.weight"].t()
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": cfg.vocab,
              "n_positions": cfg.context, "n_embd": D, "n_layer": L, "n_head": cfg.n_heads, "n_inner": F,
              "activation_function": _ACT_TO_HF[cfg.activation], "layer_norm_epsilon": cfg.norm_eps,
              "tie_word_embeddings": cfg.tied, "scale_attn_weights": True,
              "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0}
    return {k: v.contiguous() for k, v in sd.items()}, config


def _rope_rows(cfg, to_pairs):
    """Row orders of q and k that turn the model's RoPE pairs into ``to_pairs`` (None: as they are)."""
    if cfg.rope_pairs == to_pairs:
        return None, None
    pq, pk = rope_permutation(cfg.n_heads, cfg.d_k), rope_permutation(cfg.kv, cfg.d_k)
    if to_pairs == "halves":  # adjacent -> halves: the inverse of rope_permutation
        return _inverse(pq), _inverse(pk)
    return pq, pk


def to_hf_llama(model):
    """``(state_dict, config)`` in Hugging Face's LLaMA layout, with config.json as a dict. Needs RMSNorm
    and RoPE. A gated model (``ffn = gated``) gives transformers' own ``LlamaForCausalLM`` layout
    (``mlp.gate_proj`` = w1, ``up_proj`` = w3, ``down_proj`` = w2; ``model_type`` llama), which
    ``LlamaForCausalLM(LlamaConfig(**config)).load_state_dict(state_dict)`` and ``from_pretrained`` load.
    Grouped-query attention gives ``num_key_value_heads``; ``rope_theta`` and ``tie_word_embeddings`` are
    the model's. q and k rows are written for ``rotate_half`` (permuted from adjacent pairs; a ``halves``
    model's as they are). A model with biases writes ``attention_bias`` / ``mlp_bias`` (transformers
    versions without ``mlp_bias``, such as 4.35, cannot hold the MLP's). A plain-MLP model (``ffn = mlp``)
    gives ``up_proj`` / ``down_proj`` with no ``gate_proj``, which :func:`from_hf_llama` reads back but
    ``LlamaForCausalLM`` cannot load; its config has no ``model_type`` for that reason."""
    cfg, P = model.config, _params(model)
    _require(cfg, "hf-llama", norm=("rmsnorm",), position=("rope",))
    D, L, DK = cfg.d_model, cfg.n_layers, cfg.kv * cfg.d_k
    rows = dict(zip(("q_proj", "k_proj"), _rope_rows(cfg, "halves")))
    gated = cfg.ffn == "gated"
    sd = {"model.embed_tokens.weight": P["tok_emb.weight"]}
    for l in range(L):
        h, b = f"model.layers.{l}.", f"blocks.{l}."
        sd[h + "input_layernorm.weight"] = P[b + "norm1.weight"]
        for w, proj in (("wq", "q_proj"), ("wk", "k_proj"), ("wv", "v_proj"), ("wo", "o_proj")):
            W, perm = P[b + "attn." + w].t(), rows.get(proj)
            sd[h + f"self_attn.{proj}.weight"] = W if perm is None else W[perm]
            if cfg.bias:
                bias = P[b + "attn.b" + w[1]]
                sd[h + f"self_attn.{proj}.bias"] = bias if perm is None else bias[perm]
        sd[h + "post_attention_layernorm.weight"] = P[b + "norm2.weight"]
        mlp = (("gate_proj", "1"), ("up_proj", "3"), ("down_proj", "2")) if gated else \
            (("up_proj", "1"), ("down_proj", "2"))
        for proj, i in mlp:
            sd[h + f"mlp.{proj}.weight"] = P[b + "ffn.w" + i].t()
            if cfg.bias:
                sd[h + f"mlp.{proj}.bias"] = P[b + "ffn.b" + i]
    sd["model.norm.weight"] = P["norm_f.weight"]
    sd["lm_head.weight"] = P["tok_emb.weight"] if cfg.tied else P["lm_head.weight"].t()
    act = {"relu": "relu", "gelu": "gelu", "gelu_tanh": "gelu_pytorch_tanh", "silu": "silu"}[cfg.activation]
    config = {"hidden_size": D, "intermediate_size": cfg.d_ff, "num_attention_heads": cfg.n_heads,
              "num_key_value_heads": cfg.kv, "num_hidden_layers": L, "vocab_size": cfg.vocab,
              "max_position_embeddings": cfg.context, "rms_norm_eps": cfg.norm_eps, "rope_theta": cfg.rope_theta,
              "rope_scaling": None, "hidden_act": act, "tie_word_embeddings": cfg.tied, "attention_bias": cfg.bias,
              "mlp_bias": cfg.bias, "torch_dtype": "float32"}
    if gated:
        config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], **config}
    return {k: v.contiguous() for k, v in sd.items()}, config


def to_llama2c(model):
    """``(state_dict, model_args)`` for llama2.c's ``model.py``: ``Transformer(ModelArgs(**model_args))``
    then ``load_state_dict`` (``strict=False`` on PyTorch < 2, where it has ``attention.mask`` buffers, as
    its sample.py does); ``{"model": state_dict, "model_args": model_args}`` is its ckpt.pt. llama2.c's
    model is RMSNorm, RoPE on adjacent pairs with base 10000, SwiGLU (``ffn = gated``, ``silu``), no biases
    and a tied head (``output`` is ``tok_embeddings``); other models are refused. A ``halves`` model's q
    and k rows are permuted to adjacent pairs. Grouped-query attention gives ``n_kv_heads``; ``hidden_dim``
    is given, so ``multiple_of`` does not matter."""
    cfg, P = model.config, _params(model)
    _require(cfg, "llama2c", norm=("rmsnorm",), position=("rope",), activation=("silu",), ffn=("gated",))
    if cfg.bias:
        raise UnsupportedFeature("biases", "llama2.c's nn.Linear layers have bias=False")
    if cfg.rope_theta != 10000.0:
        raise UnsupportedFeature(f"rope_theta = {cfg.rope_theta!r}", "llama2.c's RoPE base is 10000")
    if not cfg.tied:
        raise UnsupportedFeature("an untied lm_head", "llama2.c's Transformer ties output to tok_embeddings "
                                 "(the C++ command's `staticformer convert MODEL -o OUT.bin --llama2c 1` writes run.c's "
                                 "model file, which can hold an untied head)")
    pq, pk = _rope_rows(cfg, "adjacent")
    sd = {"tok_embeddings.weight": P["tok_emb.weight"]}
    for l in range(cfg.n_layers):
        h, b = f"layers.{l}.", f"blocks.{l}."
        sd[h + "attention_norm.weight"] = P[b + "norm1.weight"]
        for w, perm in (("wq", pq), ("wk", pk), ("wv", None), ("wo", None)):
            W = P[b + "attn." + w].t()
            sd[h + f"attention.{w}.weight"] = W if perm is None else W[perm]
        sd[h + "ffn_norm.weight"] = P[b + "norm2.weight"]
        for w in ("w1", "w2", "w3"):
            sd[h + f"feed_forward.{w}.weight"] = P[b + "ffn." + w].t()
    sd["norm.weight"] = P["norm_f.weight"]
    sd["output.weight"] = P["tok_emb.weight"]
    model_args = dict(dim=cfg.d_model, n_layers=cfg.n_layers, n_heads=cfg.n_heads, n_kv_heads=cfg.kv,
                      vocab_size=cfg.vocab, hidden_dim=cfg.d_ff, norm_eps=cfg.norm_eps, max_seq_len=cfg.context,
                      dropout=0.0)
    return {k: v.contiguous() for k, v in sd.items()}, model_args
