"""python3 -m staticformer: conversions between PyTorch files and staticformer checkpoints.

  convert  --from nanogpt|hf-gpt2|hf-llama|llama2c|staticformer IN OUT.safetensors   PyTorch -> staticformer
  to-torch --to staticformer|nanogpt|hf-gpt2|hf-llama|llama2c IN.safetensors OUT      staticformer -> PyTorch
  info     IN.safetensors                                                     configuration, parameters

IN of `convert` is a torch.save file (.pt/.bin/.ckpt: a state dict, nanoGPT's or llama2.c's ckpt.pt, or
to-torch's file), a .safetensors file, a sharded *.index.json, or a Hugging Face model directory (config.json
and weights). torch files are read with torch.load(weights_only=True) unless --trust-pickle.
"""
import argparse
import json
import os
import sys

import torch

from . import convert as cv
from .files import read_state_dict
from .model import REFERENCE_CONFIGS, Config, StaticformerLM, load, param_shapes


def _reference_name(cfg):
    for name, (ref, _) in REFERENCE_CONFIGS.items():
        if ref == cfg:
            return name
    return None


def _report(path, model):
    cfg = model.config
    n = sum(p.numel() for p in model.parameters())
    print(f"{path}: {cfg.describe()}, {n} parameters")
    ref = _reference_name(cfg)
    if ref:
        print(f"  = the reference configuration '{ref}' (compiled into staticformer-run)")
    print("  `staticformer run`, `info`, `export` and `convert` take it, whatever its architecture")


def _metadata_of_json(d):
    """docs/model.md metadata from a JSON object whose values may be numbers or booleans."""
    out = {}
    for k, v in d.items():
        out[k] = ("true" if v else "false") if isinstance(v, bool) else repr(v) if isinstance(v, float) else str(v)
    out.setdefault("format", "staticformer")
    return out


def cmd_convert(a):
    if a.layout == "staticformer" and a.input.endswith(".safetensors") and not a.config:
        model = load(a.input)  # a staticformer checkpoint already: checked and written again
        model.save(a.output)
        _report(a.output, model)
        return 0
    if a.rope_pairs and a.layout != "hf-llama":
        raise cv.ConversionError(f"--rope-pairs is for --from hf-llama (the {a.layout} layout's RoPE pairs are fixed)")
    sd, info = read_state_dict(a.input, a.trust_pickle)
    hf_config = info.get("config")
    if a.config:
        with open(a.config) as f:
            hf_config = json.load(f)
    if a.layout == "nanogpt":
        model = cv.from_nanogpt(sd, n_heads=a.n_heads, model_args=info.get("model_args"), activation=a.activation,
                                norm_eps=a.norm_eps)
    elif a.layout == "hf-gpt2":
        model = cv.from_hf_gpt2(sd, hf_config, n_heads=a.n_heads, activation=a.activation, norm_eps=a.norm_eps)
    elif a.layout == "hf-llama":
        model = cv.from_hf_llama(sd, hf_config, n_heads=a.n_heads, context=a.context, activation=a.activation,
                                 norm_eps=a.norm_eps, rope_pairs=a.rope_pairs or "adjacent")
    elif a.layout == "llama2c":  # ckpt.pt's model_args, or --config: a JSON object of llama2.c's ModelArgs
        if a.activation not in (None, "silu"):
            raise cv.UnsupportedFeature(f"activation '{a.activation}'", "llama2.c's feed-forward is SwiGLU (silu)")
        model = cv.from_llama2c(sd, hf_config if a.config else info.get("model_args"), n_heads=a.n_heads,
                                context=a.context, norm_eps=a.norm_eps)
    else:  # staticformer: docs/model.md names; the configuration from the file ("config") or --config
        if hf_config is None:
            raise cv.ConversionError("--from staticformer: no configuration: give --config (a JSON object of "
                                     "staticformer's metadata: vocab, context, d_model, ...)")
        meta = _metadata_of_json(hf_config)
        model = StaticformerLM(Config.from_metadata(meta))
        names = [n for n, _ in param_shapes(model.config)]
        missing = [n for n in names if n not in sd]
        extra = [n for n in sd if n not in names]
        if missing or extra:
            raise cv.ConversionError(f"{a.input}: " + (f"missing tensor '{missing[0]}'" if missing
                                                      else f"unexpected tensor '{extra[0]}'") +
                                     f" for {model.config.describe()}")
        model.load_state_dict({n: sd[n].to(torch.float32) for n in names})
        model.metadata = {k: v for k, v in meta.items() if k not in model.config.metadata()}
    model.save(a.output)
    _report(a.output, model)
    return 0


def cmd_to_torch(a):
    model = load(a.input)
    if a.layout == "staticformer":
        meta = dict(model.metadata)
        meta.update(model.config.metadata())
        torch.save({"model": model.state_dict(), "config": meta}, a.output)
        print(f"{a.output}: {{'model': state dict (staticformer's names), 'config': metadata}}; "
              "staticformer.StaticformerLM(staticformer.Config.from_metadata(d['config'])).load_state_dict(d['model'])")
    elif a.layout == "nanogpt":
        sd, model_args = cv.to_nanogpt(model)
        torch.save({"model": sd, "model_args": model_args}, a.output)
        print(f"{a.output}: nanoGPT checkpoint {{'model', 'model_args'}}: GPT(GPTConfig(**model_args)).load_state_dict(model)")
    elif a.layout == "llama2c":
        sd, model_args = cv.to_llama2c(model)
        torch.save({"model": sd, "model_args": model_args}, a.output)
        print(f"{a.output}: llama2.c checkpoint {{'model', 'model_args'}}: "
              "Transformer(ModelArgs(**model_args)).load_state_dict(model)")
    else:
        sd, config = cv.to_hf_gpt2(model) if a.layout == "hf-gpt2" else cv.to_hf_llama(model)
        os.makedirs(a.output, exist_ok=True)
        torch.save(sd, os.path.join(a.output, "pytorch_model.bin"))
        with open(os.path.join(a.output, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
        print(f"{a.output}/: config.json and pytorch_model.bin ({a.layout} layout, {len(sd)} tensors)")
    return 0


def cmd_info(a):
    model = load(a.input)
    _report(a.input, model)
    for k, v in sorted(model.metadata.items()):
        print(f"  {k} = {v if len(v) <= 60 else v[:57] + '...'}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m staticformer", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("convert", help="a PyTorch model's weights -> a staticformer checkpoint")
    c.add_argument("--from", dest="layout", required=True, choices=cv.LAYOUTS + ("staticformer",))
    c.add_argument("input")
    c.add_argument("output")
    c.add_argument("--config", help="config.json (Hugging Face), llama2.c's model_args as JSON (llama2c), or "
                                    "staticformer metadata as JSON for --from staticformer")
    c.add_argument("--n-heads", type=int, help="attention heads (when no config gives them)")
    c.add_argument("--context", type=int, help="context length (hf-llama, llama2c; when no config gives it)")
    c.add_argument("--activation", help="relu | gelu | gelu_tanh | silu (or Hugging Face's names: gelu_new, ...)")
    c.add_argument("--rope-pairs", choices=("adjacent", "halves"),
                   help="hf-llama: adjacent (default: q, k rows permuted to staticformer's default pairs) or "
                        "halves (rows as stored, rope_pairs = halves in the checkpoint)")
    c.add_argument("--norm-eps", type=float, help="the norms' eps (when no config gives it; default 1e-5)")
    c.add_argument("--trust-pickle", action="store_true", help="torch.load with weights_only=False")
    c.set_defaults(run=cmd_convert)
    t = sub.add_parser("to-torch", help="a staticformer checkpoint -> a PyTorch file")
    t.add_argument("--to", dest="layout", default="staticformer", choices=("staticformer",) + cv.LAYOUTS)
    t.add_argument("input")
    t.add_argument("output", help="a .pt file (staticformer, nanogpt, llama2c) or a directory (hf-gpt2, hf-llama)")
    t.set_defaults(run=cmd_to_torch)
    i = sub.add_parser("info", help="a checkpoint's configuration and metadata")
    i.add_argument("input")
    i.set_defaults(run=cmd_info)
    a = ap.parse_args(argv)
    try:
        return a.run(a)
    except (ValueError, OSError) as e:
        print(f"staticformer: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
