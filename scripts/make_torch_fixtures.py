#!/usr/bin/env python3
"""Writes the PyTorch checkpoint fixtures under tests/model/fixtures/torch/.

Run once (the outputs are committed; CI does not need torch):

    apt-get install python3-torch python3-numpy
    /usr/bin/python3 scripts/make_torch_fixtures.py

torch.save itself writes every .bin (PyTorch's zip format), and each has a safetensors twin
written by hand below (u64 header length, JSON header, data) from the same tensors, made
contiguous: AttnLab must read the two equal, byte for byte.

- f32.bin, f16.bin, bf16.bin: a small state dict in each float type (with an int64 buffer).
- tied.bin: two names for one tensor (tied embeddings): one storage, read once.
- views.bin: views of one storage: a row (an offset), a slice with an offset, a transposed
  and a strided block (not contiguous: copied contiguous on reading).
- sharded/: pytorch_model-0000N-of-00002.bin + pytorch_model.bin.index.json; twin
  sharded.safetensors.
- gpt2_bin/: the tests/model/fixtures/hf/gpt2 checkpoint as pytorch_model.bin, its lm_head
  sharing the embedding's storage as a tied model's state_dict() does.
- f32_torch2_layout.bin: f32.bin's records laid out as PyTorch 2.x writes them (prefix
  "archive", a byteorder record, .data/ records); refused/big_endian.bin says "big".
- NAME_legacy.bin: the same state dicts saved with _use_new_zipfile_serialization=False, the
  format before PyTorch 1.6 (pickles, then the storages, no zip); the same twins.
- refused: crafted archives that must be refused with one message each:
  os_system.bin (GLOBAL os.system + REDUCE), reduce_storage.bin (a REDUCE of
  torch.FloatStorage), inst.bin (the INST opcode), storage_past_end.bin (a storage longer
  than its file), view_past_end.bin (a view past its storage's end), truncated.bin (f32.bin
  cut in half), no_pickle.bin (a zip without data.pkl), legacy_truncated.bin
  (f32_legacy.bin cut inside its storages).
"""

import collections
import io
import json
import os
import shutil
import zipfile

import numpy as np
import torch

import safetensors_file

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "tests", "model", "fixtures")
OUT = os.path.join(FIXTURES, "torch")

def write_safetensors(path, tensors):
    safetensors_file.write_safetensors(path, tensors)


def read_safetensors(path):
    return safetensors_file.read_safetensors(path)[0]


def small_state(dtype):
    g = torch.Generator().manual_seed(7)
    sd = collections.OrderedDict()
    sd["embed.weight"] = torch.randn(5, 4, generator=g).to(dtype)
    sd["norm.bias"] = torch.randn(4, generator=g).to(dtype)
    sd["layers.0.proj.weight"] = torch.randn(3, 4, generator=g).to(dtype)
    sd["position_ids"] = torch.arange(6, dtype=torch.int64).reshape(1, 6)
    return sd


def zip_archive(path, members):
    """A zip as torch.save lays it out (stored members under archive/)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in [("version", b"3\n")] + members:
            z.writestr(zipfile.ZipInfo("archive/" + name, date_time=(2020, 1, 1, 0, 0, 0)), data)


class StorageRef:
    def __init__(self, key, numel):
        self.key, self.numel = key, numel


class FakeTensor:
    """Pickles as torch.save pickles a tensor, with the storage length and view we choose."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, tuple(size), tuple(stride), False, collections.OrderedDict())

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args)


class Pickler(__import__("pickle").Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, StorageRef):
            return ("storage", torch.FloatStorage, obj.key, "cpu", obj.numel)
        return None


def crafted_pickle(state):
    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(state)
    return buf.getvalue()


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)

    for dtype, name in [(torch.float32, "f32"), (torch.float16, "f16"), (torch.bfloat16, "bf16")]:
        sd = small_state(dtype)
        torch.save(sd, os.path.join(OUT, name + ".bin"))
        write_safetensors(os.path.join(OUT, name + ".safetensors"), sd)

    g = torch.Generator().manual_seed(11)
    w = torch.randn(6, 4, generator=g)
    tied = collections.OrderedDict([("wte.weight", w), ("lm_head.weight", w),
                                    ("ln.weight", torch.randn(4, generator=g))])
    torch.save(tied, os.path.join(OUT, "tied.bin"))
    write_safetensors(os.path.join(OUT, "tied.safetensors"), tied)

    base = torch.arange(30, dtype=torch.float32).reshape(5, 6) * 0.5 - 3
    views = collections.OrderedDict()
    views["row"] = base[3]                            # offset 18, contiguous
    views["tail"] = base.view(-1)[10:22].view(3, 4)   # offset 10, contiguous
    views["transposed"] = base.t()                    # strides (1, 6)
    views["block"] = base[1:4, 2:5]                   # offset 8, strides (6, 1)
    views["every_other"] = base[:, ::2]               # strides (6, 2)
    assert not views["transposed"].is_contiguous() and not views["block"].is_contiguous()
    torch.save(views, os.path.join(OUT, "views.bin"))
    write_safetensors(os.path.join(OUT, "views.safetensors"), views)

    # Sharded as transformers shards (two files, an index naming each tensor's file).
    sharded = small_state(torch.float32)
    folder = os.path.join(OUT, "sharded")
    os.makedirs(folder)
    names = list(sharded)
    shards = [names[:2], names[2:]]
    weight_map = {}
    for i, part in enumerate(shards):
        file = "pytorch_model-%05d-of-%05d.bin" % (i + 1, len(shards))
        torch.save(collections.OrderedDict((n, sharded[n]) for n in part), os.path.join(folder, file))
        weight_map.update({n: file for n in part})
    with open(os.path.join(folder, "pytorch_model.bin.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)
    write_safetensors(os.path.join(OUT, "sharded.safetensors"), sharded)

    # A whole model: the GPT-2 fixture, tied as a state_dict() is (lm_head is wte).
    gpt2 = os.path.join(FIXTURES, "hf", "gpt2")
    folder = os.path.join(OUT, "gpt2_bin")
    os.makedirs(folder)
    shutil.copy(os.path.join(gpt2, "config.json"), folder)
    sd = read_safetensors(os.path.join(gpt2, "model.safetensors"))
    sd["lm_head.weight"] = sd["transformer.wte.weight"]
    torch.save(sd, os.path.join(folder, "pytorch_model.bin"))

    # As PyTorch 2.x lays the archive out (prefix "archive", a byteorder record, .data/
    # records), from f32.bin's own members: read as f32.bin is; "big" byte order refused below.
    def relaid(byteorder):
        with zipfile.ZipFile(os.path.join(OUT, "f32.bin")) as z:
            members = [(n.split("/", 1)[1], z.read(n)) for n in z.namelist()]
        return [(n, d) for n, d in members if n != "version"] + [
            ("byteorder", byteorder), (".data/version", b"3\n"),
            (".data/serialization_id", b"1234567890123456789012345678901234567890")]
    zip_archive(os.path.join(OUT, "f32_torch2_layout.bin"), relaid(b"little"))

    # The format before PyTorch 1.6, for the same tensors (the twins above serve both).
    for name, state in [("f32", small_state(torch.float32)), ("f16", small_state(torch.float16)),
                        ("bf16", small_state(torch.bfloat16)), ("tied", tied), ("views", views)]:
        torch.save(state, os.path.join(OUT, name + "_legacy.bin"),
                   _use_new_zipfile_serialization=False)

    # ---- refused ----
    refused = os.path.join(OUT, "refused")
    os.makedirs(refused)
    # GLOBAL os.system, then REDUCE: what a malicious pickle does.
    zip_archive(os.path.join(refused, "os_system.bin"),
                [("data.pkl", b"\x80\x02cos\nsystem\nq\x00X\x0b\x00\x00\x00echo pwned!q\x01\x85q\x02Rq\x03.")])
    # An allowed global REDUCEd: torch.FloatStorage(6).
    zip_archive(os.path.join(refused, "reduce_storage.bin"),
                [("data.pkl", b"\x80\x02ctorch\nFloatStorage\nq\x00K\x06\x85q\x01Rq\x02.")])
    # INST (protocol 0's way of calling a class), outside what torch.save writes.
    zip_archive(os.path.join(refused, "inst.bin"),
                [("data.pkl", b"(ios\nsystem\nX\x02\x00\x00\x00id."), ])
    six = np.arange(6, dtype="<f4").tobytes()
    # A storage claiming 100 floats whose file holds 6.
    zip_archive(os.path.join(refused, "storage_past_end.bin"),
                [("data.pkl", crafted_pickle(collections.OrderedDict(
                    [("w", FakeTensor(StorageRef("0", 100), 0, [10, 10], [10, 1]))]))),
                 ("data/0", six)])
    # A view reading elements 4..9 of a 6-float storage.
    zip_archive(os.path.join(refused, "view_past_end.bin"),
                [("data.pkl", crafted_pickle(collections.OrderedDict(
                    [("w", FakeTensor(StorageRef("0", 6), 4, [2, 3], [3, 1]))]))),
                 ("data/0", six)])
    with open(os.path.join(OUT, "f32.bin"), "rb") as f:
        whole = f.read()
    with open(os.path.join(refused, "truncated.bin"), "wb") as f:
        f.write(whole[:len(whole) // 2])
    zip_archive(os.path.join(refused, "no_pickle.bin"), [("data/0", six)])
    zip_archive(os.path.join(refused, "big_endian.bin"), relaid(b"big"))
    with open(os.path.join(OUT, "f32_legacy.bin"), "rb") as f:
        whole = f.read()
    with open(os.path.join(refused, "legacy_truncated.bin"), "wb") as f:
        f.write(whole[:len(whole) - 40])

    # torch.load(weights_only=True) refuses the malicious ones too; AttnLab is stricter about
    # the rest (a REDUCE of a storage type; sizes checked before reading; PyTorch 1.13 does not
    # know the byteorder record, which 2.1 added). The legacy files' storage keys are memory
    # addresses: a rerun writes equivalent files, not the same bytes.
    must_refuse = {"os_system.bin", "inst.bin", "truncated.bin", "no_pickle.bin",
                   "legacy_truncated.bin"}
    for name in sorted(os.listdir(refused)):
        try:
            torch.load(os.path.join(refused, name), weights_only=True)
            print("torch.load(weights_only=True) accepts:", name)
            if name in must_refuse:
                raise SystemExit(name + ": torch.load(weights_only=True) accepted it")
        except SystemExit:
            raise
        except Exception as e:  # noqa: BLE001 - any refusal will do
            print("torch.load(weights_only=True) refuses:", name, "-", str(e).splitlines()[-1][:100])
    for name in ["f32", "f16", "bf16", "tied", "views"]:
        loaded = torch.load(os.path.join(OUT, name + ".bin"), weights_only=True)
        legacy = torch.load(os.path.join(OUT, name + "_legacy.bin"), weights_only=True)
        assert all(torch.equal(loaded[k], legacy[k]) for k in loaded), name
        print(name, {k: (str(v.dtype), list(v.shape)) for k, v in loaded.items()})
    relaid_f32 = torch.load(os.path.join(OUT, "f32_torch2_layout.bin"), weights_only=True)
    f32 = torch.load(os.path.join(OUT, "f32.bin"), weights_only=True)
    assert all(torch.equal(relaid_f32[k], f32[k]) for k in f32)


if __name__ == "__main__":
    main()
