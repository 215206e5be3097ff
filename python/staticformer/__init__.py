"""staticformer's PyTorch interop: docs/model.md's model as an ``nn.Module``, checkpoints in both directions,
and conversions from and to nanoGPT, Hugging Face GPT-2, Hugging Face LLaMA (``LlamaForCausalLM``: SwiGLU,
grouped-query attention) and llama2.c (``model.py``'s ``Transformer``) state dicts.

Needs only the standard library, NumPy and PyTorch (Debian: ``python3-numpy python3-torch``); safetensors
files are read and written by hand. Put ``python/`` on ``PYTHONPATH`` (or run from it)::

    import staticformer as sf
    model = sf.load("out/train/model.safetensors")       # an nn.Module; logits = model(tokens)
    model = sf.StaticformerLM(sf.REFERENCE_CONFIGS["ref-gpt2"][0], seed=0)   # or train one here
    model.save("m.safetensors")                          # a checkpoint staticformer-run reads
    model = sf.from_hf_gpt2(state_dict, hf_config)       # and the converters, see staticformer.convert
    model = sf.from_hf_llama(state_dict, hf_config)      # LlamaForCausalLM's state dict and config.json
    state_dict, model_args = sf.to_llama2c(model)        # llama2.c's Transformer(ModelArgs(**model_args))

Command line: ``python3 -m staticformer --help`` (docs/python.md).
"""
from .convert import (ConversionError, UnsupportedFeature, from_hf_gpt2, from_hf_llama, from_llama2c, from_nanogpt,
                      rope_permutation, to_hf_gpt2, to_hf_llama, to_llama2c, to_nanogpt)
from .files import read_state_dict
from .model import REFERENCE_CONFIGS, Config, StaticformerLM, forward, load, loss_fn, param_shapes, save
from .safetensors import read_safetensors, write_safetensors

__all__ = ["Config", "REFERENCE_CONFIGS", "StaticformerLM", "load", "save", "forward", "loss_fn", "param_shapes",
           "from_nanogpt", "from_hf_gpt2", "from_hf_llama", "from_llama2c", "to_nanogpt", "to_hf_gpt2", "to_hf_llama",
           "to_llama2c",
           "rope_permutation", "ConversionError", "UnsupportedFeature", "read_state_dict",
           "read_safetensors", "write_safetensors", "CharTokenizer"]


class CharTokenizer:
    """examples/train's byte-level tokenizer, from a checkpoint's ``tokenizer.vocab`` metadata (a JSON
    list of byte values; token i is the i-th)::

        tok = CharTokenizer.of(model)      # model = staticformer.load(...)
        ids = tok.encode("ROMEO:");  text = tok.decode(ids)
    """

    def __init__(self, byte_values):
        self.bytes = [int(b) for b in byte_values]
        self.id_of = {b: i for i, b in enumerate(self.bytes)}

    @classmethod
    def of(cls, model):
        import json
        if "tokenizer.vocab" not in model.metadata:
            raise ValueError("the checkpoint has no 'tokenizer.vocab' metadata")
        return cls(json.loads(model.metadata["tokenizer.vocab"]))

    def encode(self, text):
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        try:
            return [self.id_of[b] for b in data]
        except KeyError as e:
            raise ValueError(f"byte {e.args[0]} is not in the vocabulary") from None

    def decode(self, ids):
        return bytes(self.bytes[int(i)] for i in ids).decode("utf-8", errors="replace")
