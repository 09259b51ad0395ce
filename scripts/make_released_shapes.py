#!/usr/bin/env python3
"""Random-weight BF16 checkpoints of released models' shapes, for `attnlab bench --model` and
`attnlab model --stats` at the sizes people run (docs/models.md, "Memory"). Not a test: the
weights are N(0, 0.02) rounded to BF16, so the numbers mean nothing; shapes, dtypes and configs
are the released ones.

    apt-get install python3-numpy
    python3 scripts/make_released_shapes.py qwen2-0.5b /tmp/qwen2-0.5b     # 0.99 GB
    python3 scripts/make_released_shapes.py llama-3.2-1b /tmp/llama-3.2-1b # 2.47 GB
    attnlab bench --model /tmp/qwen2-0.5b --tokens 2048 --threads 2
"""

import json
import os
import struct
import sys

import numpy as np

SHAPES = {
    "qwen2-0.5b": dict(
        config={
            "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "dtype": "bfloat16",
            "hidden_act": "silu", "hidden_size": 896, "intermediate_size": 4864,
            "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
            "max_position_embeddings": 32768, "max_window_layers": 24, "rms_norm_eps": 1e-6,
            "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
            "sliding_window": None, "use_sliding_window": False, "tie_word_embeddings": True,
            "vocab_size": 151936, "bos_token_id": 151643, "eos_token_id": 151643,
            "attention_dropout": 0.0, "initializer_range": 0.02, "use_cache": True,
            "layer_types": ["full_attention"] * 24},
        bias=True),
    "llama-3.2-1b": dict(
        config={
            "architectures": ["LlamaForCausalLM"], "model_type": "llama", "dtype": "bfloat16",
            "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
            "head_dim": 64, "hidden_act": "silu", "hidden_size": 2048,
            "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
            "num_key_value_heads": 8, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5,
            "pretraining_tp": 1,
            "rope_parameters": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                "original_max_position_embeddings": 8192,
                                "rope_theta": 500000.0, "rope_type": "llama3"},
            "tie_word_embeddings": True, "vocab_size": 128256, "bos_token_id": 128000,
            "eos_token_id": 128001, "initializer_range": 0.02, "use_cache": True},
        bias=False),
}


def tensors(shape):
    c = shape["config"]
    d, inner, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    hd = c.get("head_dim", d // c["num_attention_heads"])
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    out = [("model.embed_tokens.weight", (c["vocab_size"], d)), ("model.norm.weight", (d,))]
    for l in range(layers):
        p = f"model.layers.{l}."
        out += [(p + "input_layernorm.weight", (d,)), (p + "post_attention_layernorm.weight", (d,)),
                (p + "self_attn.q_proj.weight", (q, d)), (p + "self_attn.k_proj.weight", (kv, d)),
                (p + "self_attn.v_proj.weight", (kv, d)), (p + "self_attn.o_proj.weight", (d, q)),
                (p + "mlp.gate_proj.weight", (inner, d)), (p + "mlp.up_proj.weight", (inner, d)),
                (p + "mlp.down_proj.weight", (d, inner))]
        if shape["bias"]:
            out += [(p + "self_attn.q_proj.bias", (q,)), (p + "self_attn.k_proj.bias", (kv,)),
                    (p + "self_attn.v_proj.bias", (kv,))]
    return out


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in SHAPES:
        sys.exit(f"usage: {sys.argv[0]} ({'|'.join(SHAPES)}) FOLDER")
    shape, folder = SHAPES[sys.argv[1]], sys.argv[2]
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(shape["config"], f, indent=2)
    header, offset = {}, 0
    items = tensors(shape)
    for name, dims in items:
        size = int(np.prod(dims)) * 2
        header[name] = {"dtype": "BF16", "shape": list(dims), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(0)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, dims in items:
            if name.endswith("norm.weight"):
                values = np.ones(dims, dtype=np.float32)
            else:
                values = rng.standard_normal(dims, dtype=np.float32) * np.float32(0.02)
            f.write((values.view(np.uint32) >> 16).astype(np.uint16).tobytes())
    print(f"{folder}: {offset / 1e9:.2f} GB of BF16 weights")


if __name__ == "__main__":
    main()
