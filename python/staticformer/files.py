"""Reading PyTorch and Hugging Face weight files: ``.pt`` / ``.bin`` / ``.ckpt`` (torch.save), ``.safetensors``,
sharded ``*.index.json``, or a Hugging Face model directory (``config.json`` plus weights).

    state_dict, info = read_state_dict("ckpt.pt")        # info: {"model_args": ...} for nanoGPT's ckpt.pt,
                                                         #       {"config": ...} for a directory with config.json
"""
import collections
import io
import json
import os
import pickle
import zipfile

import torch

from .safetensors import read_safetensors

__all__ = ["read_state_dict", "torch_load"]

_DIR_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json", "ckpt.pt")


_STORAGE_DTYPES = {"FloatStorage": torch.float32, "DoubleStorage": torch.float64, "HalfStorage": torch.float16,
                   "BFloat16Storage": torch.bfloat16, "LongStorage": torch.int64, "IntStorage": torch.int32,
                   "ShortStorage": torch.int16, "CharStorage": torch.int8, "ByteStorage": torch.uint8,
                   "BoolStorage": torch.bool}


class _StorageType:
    def __init__(self, dtype):
        self.dtype = dtype


def _rebuild_tensor(storage, storage_offset, size, stride, *_):
    return storage.as_strided(tuple(size), tuple(stride), storage_offset)


def _rebuild_parameter(data, *_):
    return data


class _SafeUnpickler(pickle.Unpickler):
    """Reads torch.save's zip format without torch.load: the standard unpickler (every opcode, floats
    included), whose only globals are OrderedDict, the storage types and tensor rebuilding done here
    (a strided view of the storage's bytes). It constructs no other object and calls no other function."""

    def __init__(self, file, read_storage):
        super().__init__(file, encoding="utf-8")
        self.read_storage = read_storage

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(_STORAGE_DTYPES[name])
        if module == "torch._utils" and name in ("_rebuild_tensor", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if (module, name) == ("torch._utils", "_rebuild_parameter"):
            return _rebuild_parameter
        raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed (tensors and plain data only)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"unexpected persistent id {pid!r}")
        key = pid[2].decode() if isinstance(pid[2], bytes) else str(pid[2])
        return self.read_storage(key, pid[1].dtype)


def _safe_load(path):
    """torch.save's zip format (torch >= 1.6), tensors on the CPU."""
    with zipfile.ZipFile(path) as z:
        pkl = [n for n in z.namelist() if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pkl) != 1:
            raise pickle.UnpicklingError("not torch.save's zip format (no single data.pkl)")
        prefix = pkl[0][:-len("data.pkl")]
        cache = {}

        def read_storage(key, dtype):
            if key not in cache:
                raw = bytearray(z.read(prefix + "data/" + key))
                cache[key] = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
            return cache[key]

        return _SafeUnpickler(io.BytesIO(z.read(pkl[0])), read_storage).load()


def torch_load(path, trust_pickle=False):
    """Loads a torch.save file on the CPU without running code from it: torch.load(weights_only=True),
    or, where that refuses plain data (torch 1.13's weights_only has no floats, which nanoGPT's
    ckpt.pt holds in model_args and config), :class:`_SafeUnpickler`. ``trust_pickle``:
    torch.load(weights_only=False), which runs whatever the file says."""
    if trust_pickle:
        return torch.load(path, map_location="cpu", weights_only=False)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        pass
    try:
        return _safe_load(path)
    except (pickle.UnpicklingError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path}: the file holds more than tensors and plain data ({e}). If you trust it, "
                         "--trust-pickle loads it with torch.load(weights_only=False), which can run code "
                         "from the file.") from None


def _tensors_of_safetensors(path):
    arrays, _ = read_safetensors(path)
    return {k: torch.from_numpy(v) for k, v in arrays.items()}


def read_state_dict(path, trust_pickle=False):
    """``(state_dict, info)``. ``info`` may hold ``model_args`` (nanoGPT's ckpt.pt) and ``config``
    (config.json of a Hugging Face model directory)."""
    info = {}
    if os.path.isdir(path):
        cj = os.path.join(path, "config.json")
        if os.path.exists(cj):
            with open(cj) as f:
                info["config"] = json.load(f)
        for name in _DIR_WEIGHTS:
            if os.path.exists(os.path.join(path, name)):
                sd, more = read_state_dict(os.path.join(path, name), trust_pickle)
                info.update(more)
                return sd, info
        raise ValueError(f"{path}: a directory without weights (looked for {', '.join(_DIR_WEIGHTS)})")
    if path.endswith(".index.json"):  # sharded: {"weight_map": {name: file}}
        with open(path) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
        sd = {}
        for shard in files:
            more, _ = read_state_dict(os.path.join(os.path.dirname(path), shard), trust_pickle)
            sd.update(more)
        return sd, info
    if path.endswith(".safetensors"):
        return _tensors_of_safetensors(path), info
    obj = torch_load(path, trust_pickle)
    if isinstance(obj, dict) and isinstance(obj.get("model"), dict):  # nanoGPT's ckpt.pt, or to-torch's file
        if isinstance(obj.get("model_args"), dict):
            info["model_args"] = obj["model_args"]
        if isinstance(obj.get("config"), dict):
            info["config"] = obj["config"]
        obj = obj["model"]
    elif isinstance(obj, dict) and isinstance(obj.get("state_dict"), dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict) or not all(torch.is_tensor(v) for v in obj.values()):
        raise ValueError(f"{path}: not a state dict (a map of names to tensors), nor nanoGPT's ckpt.pt")
    return dict(obj), info
