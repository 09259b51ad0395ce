"""The one safetensors writer and reader of the fixture and training scripts.

The format: the header's length as a little-endian u64, the JSON header (each tensor's dtype,
shape and byte range; "__metadata__" optional), padded with spaces to a multiple of 8 as the
safetensors library pads, then the tensors' bytes, row-major and little-endian.

    from safetensors_file import read_safetensors, write_safetensors
    write_safetensors("model.safetensors", state, dtype="F32", metadata={"format": "pt"})
    state, metadata = read_safetensors("model.safetensors")
"""

import collections
import json
import struct

import numpy as np
import torch

NAMES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}
DTYPES = {name: dtype for dtype, name in NAMES.items()}


def tensor_bytes(t, dtype=None):
    """t's bytes as `dtype` ("F32", "F16", "BF16"; its own dtype when None)."""
    t = t.detach()
    if dtype is not None:
        t = t.to(DTYPES[dtype])
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def write_safetensors(path, tensors, dtype=None, metadata=None, metadata_last=False):
    """Writes name -> torch tensor in sorted name order, each as `dtype` (its own when None).
    `metadata` comes first in the header, or last where a script's files always had it there
    (a rerun then gives the committed bytes)."""
    header, blobs, offset = {}, [], 0
    if metadata is not None and not metadata_last:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        t = tensors[name]
        data = tensor_bytes(t, dtype)
        header[name] = {"dtype": dtype or NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata is not None and metadata_last:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path):
    """A file of F32 tensors: name -> torch tensor in sorted name order, and its metadata.
    Any other dtype is refused (ValueError naming the tensor)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = collections.OrderedDict()
    for name in sorted(k for k in header if k != "__metadata__"):
        info = header[name]
        if info["dtype"] != "F32":
            raise ValueError(f"{name} is {info['dtype']}")
        b, e = info["data_offsets"]
        a = np.frombuffer(raw[base + b:base + e], dtype="<f4").reshape(info["shape"])
        out[name] = torch.from_numpy(a.copy())
    return out, header.get("__metadata__", {})
