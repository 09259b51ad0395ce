#!/usr/bin/env python3
"""`attnlab model` against PyTorch on a GPT-2-small-shaped float32 checkpoint (12 layers x 768,
12 heads, vocab 50257, 1024 positions; random weights), 128 tokens. Not a test: a measurement.

    apt-get install python3-torch python3-numpy libopenblas0-pthread
    python3 scripts/bench_model.py [--attnlab build/release/app/attnlab] [--dir /tmp/gpt2-small]
                                   [--tokens 128] [--threads 2] [--repeats 5]

Writes the checkpoint (config.json + model.safetensors, ~500 MB) once, then reports
  - attnlab model as a whole process (loading, forward, writing the npz), wall time and peak RSS;
  - PyTorch (torch.set_num_threads(N)) running the same forward in process (eager attention
    with the weights recorded, as `attnlab model` records them), after loading.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np

SHAPE = dict(n_embd=768, n_layer=12, n_head=12, n_positions=1024, vocab_size=50257)


def write_checkpoint(folder):
    os.makedirs(folder, exist_ok=True)
    if os.path.exists(os.path.join(folder, "model.safetensors")):
        return
    d, V, P, L = SHAPE["n_embd"], SHAPE["vocab_size"], SHAPE["n_positions"], SHAPE["n_layer"]
    rng = np.random.default_rng(0)
    shapes = {"wte.weight": (V, d), "wpe.weight": (P, d), "ln_f.weight": (d,), "ln_f.bias": (d,)}
    for l in range(L):
        p = f"h.{l}."
        shapes.update({p + "ln_1.weight": (d,), p + "ln_1.bias": (d,),
                       p + "attn.c_attn.weight": (d, 3 * d), p + "attn.c_attn.bias": (3 * d,),
                       p + "attn.c_proj.weight": (d, d), p + "attn.c_proj.bias": (d,),
                       p + "ln_2.weight": (d,), p + "ln_2.bias": (d,),
                       p + "mlp.c_fc.weight": (d, 4 * d), p + "mlp.c_fc.bias": (4 * d,),
                       p + "mlp.c_proj.weight": (4 * d, d), p + "mlp.c_proj.bias": (d,)})
    header, offset = {}, 0
    for name in sorted(shapes):
        n = int(np.prod(shapes[name])) * 4
        header[name] = {"dtype": "F32", "shape": list(shapes[name]),
                        "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name in sorted(shapes):
            shape = shapes[name]
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                values = np.ones(shape, np.float32)
            else:
                values = (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)
            f.write(values.tobytes())
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_ctx": 1024,
              "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", **SHAPE}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1)


def time_attnlab(binary, folder, ids, threads, repeats):
    out = os.path.join(folder, "bench_out.npz")
    times, peaks, cpus = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", binary, "model", "--model", folder,
                               "--ids", ",".join(map(str, ids)), "--out", out,
                               "--threads", str(threads)],
                              capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit("attnlab model failed: " + proc.stderr)
        rss, user, system = proc.stderr.strip().splitlines()[-1].split()
        peaks.append(int(rss) * 1024)
        cpus.append(float(user) + float(system))
    os.remove(out)
    return sorted(times)[len(times) // 2], max(peaks), sorted(cpus)[len(cpus) // 2]


def time_torch(folder, ids, threads, repeats):
    import torch
    torch.set_num_threads(threads)
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    raw = np.memmap(os.path.join(folder, "model.safetensors"), dtype=np.uint8, mode="r")
    W = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        W[name] = torch.from_numpy(np.frombuffer(raw[8 + n + b: 8 + n + e], dtype=np.float32)
                                   .reshape(info["shape"]))
    d, H, L = SHAPE["n_embd"], SHAPE["n_head"], SHAPE["n_layer"]
    hd = d // H
    idx = torch.tensor(ids)
    S = len(ids)
    causal = torch.tril(torch.ones(S, S, dtype=torch.bool))

    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x.pow(3))))

    def forward():
        with torch.no_grad():
            x = W["wte.weight"][idx] + W["wpe.weight"][:S]
            atts = []
            for l in range(L):
                p = f"h.{l}."
                h = torch.nn.functional.layer_norm(x, (d,), W[p + "ln_1.weight"], W[p + "ln_1.bias"])
                qkv = torch.addmm(W[p + "attn.c_attn.bias"], h, W[p + "attn.c_attn.weight"])
                q, k, v = (t.view(S, H, hd).transpose(0, 1) for t in qkv.split(d, dim=-1))
                w = q @ k.transpose(-1, -2) / hd ** 0.5
                w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min))
                w = torch.softmax(w, dim=-1)
                a = (w @ v).transpose(0, 1).reshape(S, d)
                x = x + torch.addmm(W[p + "attn.c_proj.bias"], a, W[p + "attn.c_proj.weight"])
                h = torch.nn.functional.layer_norm(x, (d,), W[p + "ln_2.weight"], W[p + "ln_2.bias"])
                m = gelu_new(torch.addmm(W[p + "mlp.c_fc.bias"], h, W[p + "mlp.c_fc.weight"]))
                x = x + torch.addmm(W[p + "mlp.c_proj.bias"], m, W[p + "mlp.c_proj.weight"])
                atts.append(w)
            return torch.stack(atts)

    forward()  # warm-up: pages in, allocator primed
    times, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        forward()
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return sorted(times)[len(times) // 2], sorted(cpus)[len(cpus) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--attnlab", default="build/release/app/attnlab")
    parser.add_argument("--dir", default="/tmp/attnlab-gpt2-small")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-torch", action="store_true")
    args = parser.parse_args()
    write_checkpoint(args.dir)
    ids = [int(i) for i in np.random.default_rng(1).integers(0, SHAPE["vocab_size"], args.tokens)]
    size = os.path.getsize(os.path.join(args.dir, "model.safetensors"))
    seconds, peak, cpu = time_attnlab(args.attnlab, args.dir, ids, args.threads, args.repeats)
    print(f"checkpoint: {size / 1e6:.1f} MB float32, {args.tokens} tokens, {args.threads} threads")
    print(f"attnlab model (whole process, loading + forward + npz): {seconds * 1e3:.0f} ms, "
          f"CPU {cpu * 1e3:.0f} ms, peak RSS {peak / 1e6:.0f} MB = {peak / size:.2f} x checkpoint")
    if not args.skip_torch:
        import torch
        tseconds, tcpu = time_torch(args.dir, ids, args.threads, args.repeats)
        print(f"PyTorch {torch.__version__} forward in process (after loading): "
              f"{tseconds * 1e3:.0f} ms, CPU {tcpu * 1e3:.0f} ms")
    print(f"(medians of {args.repeats}; on a shared machine compare the CPU times, "
          f"the wall times include waiting for a core; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
