#!/usr/bin/env python3
"""Writes the tiny checkpoints and their expected outputs under tests/model/fixtures/.

Run once (the outputs are committed; CI does not need torch):

    apt-get install python3-torch python3-numpy
    python3 scripts/make_model_fixtures.py

Each fixture folder holds config.json, model.safetensors (or shards + index) and expected.npz
with ids, attentions [L,H,S,S], logits [S,V], q [L,H,S,hd], k and v [L,Hkv,S,hd], computed in
float64 by plain-torch re-implementations written from Hugging Face's modeling_gpt2.py and
modeling_llama.py / modeling_qwen2.py / modeling_qwen3.py / modeling_mistral.py (eager
attention). The references read the weights back from the bytes written (so F16/BF16
rounding is part of the reference) and share no code with AttnLab.
"""

import json
import math
import os
import sys

import numpy as np
import torch

import safetensors_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "model", "fixtures")

# ---- safetensors (safetensors_file.py) ---------------------------------------------------------

DTYPES = {"F32": (torch.float32, 4), "F16": (torch.float16, 2), "BF16": (torch.bfloat16, 2)}


def roundtrip(t, dtype):
    """The values a reader of the file sees, as float64."""
    return t.detach().to(DTYPES[dtype][0]).to(torch.float64)


def write_safetensors(path, tensors, dtype):
    # The metadata last, as this script always wrote it.
    safetensors_file.write_safetensors(path, tensors, dtype, {"format": "pt"}, metadata_last=True)


def write_checkpoint(folder, tensors, dtype, shards=1):
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        if old.endswith(".safetensors") or old.endswith(".index.json"):
            os.remove(os.path.join(folder, old))
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), tensors, dtype)
        return
    names = sorted(tensors)
    weight_map = {}
    for s in range(shards):
        part = {n: tensors[n] for n in names[s::shards]}
        file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(os.path.join(folder, file), part, dtype)
        weight_map.update({n: file for n in part})
    total = sum(t.numel() * DTYPES[dtype][1] for t in tensors.values())
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)


# ---- GPT-2 (modeling_gpt2.py, eager attention) -------------------------------------------------


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def gpt2_forward(cfg, W, ids, prefix):
    d, H = cfg["n_embd"], cfg["n_head"]
    hd = d // H
    S = len(ids)
    x = W[prefix + "wte.weight"][ids] + W[prefix + "wpe.weight"][torch.arange(S)]
    causal = torch.tril(torch.ones(S, S, dtype=torch.bool))
    atts, qs, ks, vs = [], [], [], []
    for l in range(cfg["n_layer"]):
        p = f"{prefix}h.{l}."
        h = layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], cfg["layer_norm_epsilon"])
        qkv = h @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]  # Conv1D: x W + b
        q, k, v = qkv.split(d, dim=-1)
        q, k, v = (t.view(S, H, hd).transpose(0, 1) for t in (q, k, v))
        w = q @ k.transpose(-1, -2) / (v.size(-1) ** 0.5)
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        w = torch.softmax(w, dim=-1)
        a = (w @ v).transpose(0, 1).reshape(S, d)
        x = x + a @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        h = layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], cfg["layer_norm_epsilon"])
        m = gelu_new(h @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"])
        x = x + m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
        atts.append(w), qs.append(q), ks.append(k), vs.append(v)
    x = layer_norm(x, W[prefix + "ln_f.weight"], W[prefix + "ln_f.bias"], cfg["layer_norm_epsilon"])
    logits = x @ W[prefix + "wte.weight"].T  # tied lm head
    return atts, qs, ks, vs, logits


def make_gpt2(name, dtype, prefix, seed, ids):
    cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 16, "n_head": 4,
           "n_layer": 2, "n_positions": 12, "n_ctx": 12, "vocab_size": 40, "n_inner": None,
           "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
           "tie_word_embeddings": True, "bos_token_id": 0, "eos_token_id": 0}
    g = torch.Generator().manual_seed(seed)
    d, inner, P, V = 16, 64, 12, 40

    def r(*shape, scale=0.3):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    T = {prefix + "wte.weight": r(V, d), prefix + "wpe.weight": r(P, d)}
    for l in range(2):
        p = f"{prefix}h.{l}."
        T[p + "ln_1.weight"] = 1 + r(d, scale=0.1)
        T[p + "ln_1.bias"] = r(d, scale=0.1)
        T[p + "attn.c_attn.weight"] = r(d, 3 * d)
        T[p + "attn.c_attn.bias"] = r(3 * d, scale=0.1)
        T[p + "attn.c_proj.weight"] = r(d, d)
        T[p + "attn.c_proj.bias"] = r(d, scale=0.1)
        T[p + "ln_2.weight"] = 1 + r(d, scale=0.1)
        T[p + "ln_2.bias"] = r(d, scale=0.1)
        T[p + "mlp.c_fc.weight"] = r(d, inner)
        T[p + "mlp.c_fc.bias"] = r(inner, scale=0.1)
        T[p + "mlp.c_proj.weight"] = r(inner, d, scale=0.15)
        T[p + "mlp.c_proj.bias"] = r(d, scale=0.1)
        # the causal-mask buffer old GPT-2 checkpoints carry: must be ignored
        T[p + "attn.bias"] = torch.tril(torch.ones(P, P, dtype=torch.float64)).view(1, 1, P, P)
    T[prefix + "ln_f.weight"] = 1 + r(d, scale=0.1)
    T[prefix + "ln_f.bias"] = r(d, scale=0.1)
    folder = os.path.join(ROOT, name)
    write_checkpoint(folder, T, dtype)
    write_config(folder, cfg)
    W = {n: roundtrip(t, dtype) for n, t in T.items()}
    save_expected(folder, ids, *gpt2_forward(cfg, W, torch.tensor(ids), prefix))


# ---- the llama family (modeling_llama.py and its qwen2 / qwen3 / mistral siblings) ---------------


def rms_norm(x, w, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(variance + eps))


def rope_inv_freq(cfg, hd):
    base = cfg.get("rope_theta", 10000.0)
    inv = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))  # float32
    inv = inv.to(torch.float64)
    rs = cfg.get("rope_scaling")
    if rs is None:
        return inv
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        return inv / rs["factor"]
    if kind == "llama3":  # _compute_llama3_parameters
        factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        out = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * out / factor + smooth * out
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, out)
    raise ValueError(kind)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def llama_forward(cfg, W, ids):
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    hd = cfg.get("head_dim") or D // H
    eps = cfg["rms_norm_eps"]
    S = len(ids)
    arch = cfg["model_type"]
    x = W["model.embed_tokens.weight"][ids]
    inv = rope_inv_freq(cfg, hd)
    # positions x inv_freq in float32 as Hugging Face does, cos/sin then in double
    freqs = (torch.arange(S, dtype=torch.float32)[:, None] * inv.float()[None, :]).double()
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    i = torch.arange(S)[:, None]
    j = torch.arange(S)[None, :]
    allowed = j <= i
    if arch == "mistral" and cfg.get("sliding_window"):
        allowed = allowed & (j > i - cfg["sliding_window"])
    atts, qs, ks, vs = [], [], [], []
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)

        def proj(n):
            y = h @ W[p + f"self_attn.{n}_proj.weight"].T
            if p + f"self_attn.{n}_proj.bias" in W:
                y = y + W[p + f"self_attn.{n}_proj.bias"]
            return y

        q = proj("q").view(S, H, hd)
        k = proj("k").view(S, Hkv, hd)
        v = proj("v").view(S, Hkv, hd)
        if arch == "qwen3":  # q_norm / k_norm over head_dim, before RoPE
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        kr = k.repeat_interleave(H // Hkv, dim=0)  # repeat_kv
        vr = v.repeat_interleave(H // Hkv, dim=0)
        w = q @ kr.transpose(-1, -2) * hd ** -0.5
        w = w.masked_fill(~allowed, float("-inf"))
        w = torch.softmax(w, dim=-1)
        a = (w @ vr).transpose(0, 1).reshape(S, H * hd)
        o = a @ W[p + "self_attn.o_proj.weight"].T
        if p + "self_attn.o_proj.bias" in W:
            o = o + W[p + "self_attn.o_proj.bias"]
        x = x + o
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate = h @ W[p + "mlp.gate_proj.weight"].T
        up = h @ W[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ W[p + "mlp.down_proj.weight"].T
        atts.append(w), qs.append(q), ks.append(k), vs.append(v)
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    return atts, qs, ks, vs, x @ head.T


def make_llama(name, cfg, dtype, seed, ids, shards=1):
    g = torch.Generator().manual_seed(seed)
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    hd = cfg.get("head_dim") or D // H
    I, V = cfg["intermediate_size"], cfg["vocab_size"]
    arch = cfg["model_type"]
    bias = arch == "qwen2" or cfg.get("attention_bias", False)

    def r(*shape, scale=0.3):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    T = {"model.embed_tokens.weight": r(V, D)}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        T[p + "input_layernorm.weight"] = 1 + r(D, scale=0.1)
        T[p + "self_attn.q_proj.weight"] = r(H * hd, D)
        T[p + "self_attn.k_proj.weight"] = r(Hkv * hd, D)
        T[p + "self_attn.v_proj.weight"] = r(Hkv * hd, D)
        T[p + "self_attn.o_proj.weight"] = r(D, H * hd)
        if bias:
            T[p + "self_attn.q_proj.bias"] = r(H * hd, scale=0.2)
            T[p + "self_attn.k_proj.bias"] = r(Hkv * hd, scale=0.2)
            T[p + "self_attn.v_proj.bias"] = r(Hkv * hd, scale=0.2)
        if arch != "qwen2" and cfg.get("attention_bias", False):
            T[p + "self_attn.o_proj.bias"] = r(D, scale=0.2)
        if arch == "qwen3":
            T[p + "self_attn.q_norm.weight"] = 1 + r(hd, scale=0.2)
            T[p + "self_attn.k_norm.weight"] = 1 + r(hd, scale=0.2)
        T[p + "post_attention_layernorm.weight"] = 1 + r(D, scale=0.1)
        T[p + "mlp.gate_proj.weight"] = r(I, D)
        T[p + "mlp.up_proj.weight"] = r(I, D)
        T[p + "mlp.down_proj.weight"] = r(D, I, scale=0.2)
    T["model.norm.weight"] = 1 + r(D, scale=0.1)
    if not cfg.get("tie_word_embeddings"):
        T["lm_head.weight"] = r(V, D)
    folder = os.path.join(ROOT, name)
    write_checkpoint(folder, T, dtype, shards)
    write_config(folder, cfg)
    W = {n: roundtrip(t, dtype) for n, t in T.items()}
    save_expected(folder, ids, *llama_forward(cfg, W, torch.tensor(ids)))


# ---- outputs ---------------------------------------------------------------------------------


def write_config(folder, cfg):
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)


def save_expected(folder, ids, atts, qs, ks, vs, logits):
    np.savez(os.path.join(folder, "expected.npz"),
             ids=np.array(ids, dtype=np.int64),
             attentions=torch.stack(atts).numpy().astype(np.float32),
             q=torch.stack(qs).numpy().astype(np.float32),
             k=torch.stack(ks).numpy().astype(np.float32),
             v=torch.stack(vs).numpy().astype(np.float32),
             logits=logits.numpy().astype(np.float32))


def llama_config(model_type, **extra):
    cfg = {"model_type": model_type, "hidden_size": 16, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 32,
           "vocab_size": 40, "max_position_embeddings": 32, "rms_norm_eps": 1e-6,
           "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": False,
           "bos_token_id": 1, "eos_token_id": 2}
    cfg.update(extra)
    return cfg


def main():
    torch.set_default_dtype(torch.float64)
    ids = [3, 17, 5, 39, 0, 22, 8]
    make_gpt2("gpt2_lmhead_f32", "F32", "transformer.", 1, ids)
    make_gpt2("gpt2_base_f16", "F16", "", 2, ids)
    # GQA (4 query heads on 2 kv heads), untied head, llama3 rope scaling whose three frequency
    # bands (kept, smoothed, divided) are all hit by head_dim 8, BF16, two shards.
    make_llama("llama_gqa_llama3_bf16_sharded",
               llama_config("llama", rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                                   "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                   "original_max_position_embeddings": 64}),
               "BF16", 3, ids, shards=2)
    # MQA (one kv head), tied head, linear rope scaling, explicit head_dim, F32.
    make_llama("llama_mqa_linear_tied",
               llama_config("llama", num_key_value_heads=1, head_dim=4, tie_word_embeddings=True,
                            rope_scaling={"type": "linear", "factor": 2.0}, rope_theta=500.0),
               "F32", 4, ids)
    make_llama("qwen2_bias_tied", llama_config("qwen2", tie_word_embeddings=True), "F32", 5, ids)
    # qwen3: head_dim 8 with 4 heads on hidden 24 (4 x 8 != 24), q/k norm.
    make_llama("qwen3_qknorm",
               llama_config("qwen3", hidden_size=24, head_dim=8, rope_theta=1000000.0),
               "F32", 6, ids)
    make_llama("mistral_window3", llama_config("mistral", sliding_window=3), "F32", 7, ids)
    print("fixtures written to", os.path.normpath(ROOT))


if __name__ == "__main__":
    sys.exit(main())
