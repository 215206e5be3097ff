"""Reading and writing safetensors files by hand (struct + json), without the `safetensors` package.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON (one entry per
tensor: dtype, shape, data_offsets; optional ``__metadata__``, a map of strings), then the raw
little-endian data. ::

    tensors, metadata = read_safetensors("model.safetensors")   # {name: numpy array}, {str: str}
    write_safetensors("out.safetensors", [("w", array)], {"format": "staticformer"})

Reading returns NumPy arrays that own their memory. ``BF16`` (which NumPy has no type for) is
widened to float32 on reading; every other dtype keeps its own NumPy type.
"""
import json
import os
import struct

import numpy as np

__all__ = ["read_safetensors", "write_safetensors", "read_header"]

# safetensors dtype -> NumPy dtype (little-endian)
_NP_OF = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?",
}
# NumPy dtype -> safetensors dtype, for writing
_ST_OF = {np.dtype(v): k for k, v in _NP_OF.items() if k not in ("BF16",)}


def read_header(path):
    """The JSON header of a safetensors file (with ``__metadata__`` if present) and where its data starts."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise ValueError(f"{path}: not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", head)
        if n > 100_000_000:
            raise ValueError(f"{path}: not a safetensors file (header length {n})")
        raw = f.read(n)
    if len(raw) != n:
        raise ValueError(f"{path}: truncated header ({len(raw)} of {n} bytes)")
    try:
        header = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"{path}: the header is not JSON: {e}") from None
    return header, 8 + n


def read_safetensors(path):
    """Returns ``(tensors, metadata)``: ``{name: numpy array}`` in the file's header order and the
    ``__metadata__`` map (``{}`` when absent)."""
    header, base = read_header(path)
    meta = header.pop("__metadata__", None) or {}
    with open(path, "rb") as f:
        data = f.read()
    out = {}
    for name, e in header.items():
        dt = e.get("dtype")
        if dt not in _NP_OF:
            raise ValueError(f"{path}: tensor '{name}': dtype {dt} is not supported")
        b, en = e["data_offsets"]
        shape = tuple(int(s) for s in e["shape"])
        if not (0 <= b <= en and base + en <= len(data)):
            raise ValueError(f"{path}: tensor '{name}': byte range [{b}, {en}) is outside the data")
        arr = np.frombuffer(data[base + b:base + en], dtype=_NP_OF[dt])
        if arr.size != int(np.prod(shape, dtype=np.int64)):
            raise ValueError(f"{path}: tensor '{name}': {arr.size} elements for shape {list(shape)}")
        arr = arr.reshape(shape)
        if dt == "BF16":  # the upper 16 bits of a float32
            arr = (arr.astype("<u4") << 16).view("<f4")
        out[name] = arr.copy()
    return out, dict(meta)


def write_safetensors(path, tensors, metadata=None):
    """Writes ``tensors`` (a list of ``(name, numpy array)`` or a dict), in that order and contiguous,
    with ``metadata`` (a map of strings) as ``__metadata__``. The header is padded with spaces to a
    multiple of 8 bytes, as the reference implementation does. The file is written to ``path.tmp``
    and then renamed, so that a reader never sees half a file."""
    if isinstance(tensors, dict):
        tensors = list(tensors.items())
    header = {}
    if metadata:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"metadata must map strings to strings: {k!r}: {v!r}")
        header["__metadata__"] = dict(metadata)
    blobs, offset = [], 0
    for name, arr in tensors:
        arr = np.ascontiguousarray(arr)
        dt = arr.dtype.newbyteorder("<") if arr.dtype.itemsize > 1 else arr.dtype
        arr = arr.astype(dt, copy=False)
        if np.dtype(dt) not in _ST_OF:
            raise TypeError(f"tensor '{name}': NumPy dtype {arr.dtype} has no safetensors dtype here")
        raw = arr.tobytes(order="C")
        header[name] = {"dtype": _ST_OF[np.dtype(dt)], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    hb = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hb += b" " * ((8 - len(hb) % 8) % 8)
    tmp = os.fspath(path) + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for raw in blobs:
            f.write(raw)
    os.replace(tmp, path)
