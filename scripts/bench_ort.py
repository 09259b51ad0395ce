#!/usr/bin/python3
"""AttnLab's GPT-2 forward against ONNX Runtime on the same weights (issue 35 item 5).

Exports a GPT-2 checkpoint (config.json + F32 model.safetensors) to ONNX with PyTorch
(opset 17; outputs: logits for every position and every layer's attention weights
[L, H, S, S]), installs onnxruntime-node into the build folder if it is missing, checks that
AttnLab's attentions agree with ONNX Runtime's (max abs difference <= 1e-4, else exit 1), then
alternates ORT and AttnLab runs and prints each median and the ratio ORT / AttnLab (below 1:
ORT is faster) for every thread count and text length asked, with each side's rate: the
forward's FLOPs (logits included) over its median time, as a share of the FMA loop's peak that
`attnlab bench --model --logits` measures at that thread count.

ORT: graph optimisation 'all', intra-op threads = N, inter-op threads 1, one session per
thread count kept across runs (scripts/bench_ort.js); its time is that of `session.run`.
AttnLab: one `attnlab model --model DIR --ids ... --out F.npz --logits --stats --threads N`
process per run; its time is the "forward" it prints on stderr (the command reads the mapped
weights' pages while it loads, as ORT's session holds its weights before the timed run; the
attention maps of the record are computed again from the run's Q and K while the file is
written, which is not in it). The first run of each side at each setting is the agreement
check and is not timed. Speed is reported, never asserted. Not a test.

Needs Debian's python3-torch and libopenblas0-pthread (run it with /usr/bin/python3: a pyenv
python on PATH has no torch), node and npm (onnxruntime-node 1.30.0 comes from the npm
registry into BUILD/ort). `scripts/bench_model.py --dir DIR` writes a GPT-2-small-shaped F32
checkpoint (random weights).

    /usr/bin/python3 scripts/bench_ort.py --model DIR [--attnlab build/release/app/attnlab]
        [--threads 1,2] [--tokens 128,512] [--repeats 5]
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

import numpy as np
import torch
from torch import nn

import safetensors_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_VERSION = "1.30.0"
TOLERANCE = 1e-4


def load_safetensors(path):
    """name -> float32 tensor."""
    try:
        return safetensors_file.read_safetensors(path)[0]
    except ValueError as error:
        sys.exit(f"bench_ort: {error}; only F32 checkpoints are exported")


class Block(nn.Module):
    """One GPT-2 layer: pre-norm attention and MLP, Conv1D weights stored [in, out]."""

    def __init__(self, config, weights, prefix):
        super().__init__()
        self.heads = config["n_head"]
        self.head_dim = config["n_embd"] // self.heads
        eps = config.get("layer_norm_epsilon", 1e-5)
        d = config["n_embd"]
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        for name in ("ln_1", "ln_2"):
            getattr(self, name).weight.data = weights[f"{prefix}{name}.weight"]
            getattr(self, name).bias.data = weights[f"{prefix}{name}.bias"]
        for name in ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"):
            key = name.replace(".", "_")
            self.register_parameter(key + "_w", nn.Parameter(weights[f"{prefix}{name}.weight"]))
            self.register_parameter(key + "_b", nn.Parameter(weights[f"{prefix}{name}.bias"]))

    def forward(self, x, mask):
        s, hd = x.shape[1], self.head_dim
        d = self.heads * hd
        qkv = self.ln_1(x) @ self.attn_c_attn_w + self.attn_c_attn_b
        q, k, v = qkv.split(d, dim=2)
        q, k, v = (t.reshape(1, s, self.heads, hd).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        scores = scores.masked_fill(~mask, torch.finfo(torch.float32).min)
        weights = torch.softmax(scores, dim=-1)
        a = (weights @ v).transpose(1, 2).reshape(1, s, d)
        x = x + a @ self.attn_c_proj_w + self.attn_c_proj_b
        h = self.ln_2(x) @ self.mlp_c_fc_w + self.mlp_c_fc_b
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h ** 3)))
        x = x + h @ self.mlp_c_proj_w + self.mlp_c_proj_b
        return x, weights[0]


class GPT2(nn.Module):
    """input_ids [1, S] -> logits [S, V] (LM head tied to wte) and attentions [L, H, S, S]."""

    def __init__(self, config, weights):
        super().__init__()
        weights = {k[len("transformer."):] if k.startswith("transformer.") else k: v
                   for k, v in weights.items()}
        self.wte = nn.Parameter(weights["wte.weight"])
        self.wpe = nn.Parameter(weights["wpe.weight"])
        self.blocks = nn.ModuleList(Block(config, weights, f"h.{i}.")
                                    for i in range(config["n_layer"]))
        self.ln_f = nn.LayerNorm(config["n_embd"], eps=config.get("layer_norm_epsilon", 1e-5))
        self.ln_f.weight.data = weights["ln_f.weight"]
        self.ln_f.bias.data = weights["ln_f.bias"]
        n = config["n_positions"]
        self.register_buffer("causal", torch.tril(torch.ones(n, n, dtype=torch.bool)))

    def forward(self, input_ids):
        s = input_ids.shape[1]
        x = self.wte[input_ids] + self.wpe[:s]
        mask = self.causal[:s, :s]
        maps = []
        for block in self.blocks:
            x, w = block(x, mask)
            maps.append(w)
        logits = self.ln_f(x)[0] @ self.wte.t()
        return logits, torch.stack(maps)


def export(model_dir, onnx_path):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    if config.get("model_type") != "gpt2":
        sys.exit(f"bench_ort: {model_dir} is {config.get('model_type')}, not gpt2")
    net = GPT2(config, load_safetensors(os.path.join(model_dir, "model.safetensors"))).eval()
    ids = torch.zeros(1, 8, dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(net, (ids,), onnx_path, opset_version=17,
                          input_names=["input_ids"], output_names=["logits", "attentions"],
                          dynamic_axes={"input_ids": {1: "S"}, "logits": {0: "S"},
                                        "attentions": {2: "S", 3: "S"}})
    return config


def ensure_ort(prefix):
    package = os.path.join(prefix, "node_modules", "onnxruntime-node", "package.json")
    if os.path.exists(package):
        with open(package) as f:
            if json.load(f).get("version") == ORT_VERSION:
                return
    os.makedirs(prefix, exist_ok=True)
    print(f"installing onnxruntime-node {ORT_VERSION} into {prefix}", flush=True)
    env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
    subprocess.run(["npm", "install", "--no-save", f"onnxruntime-node@{ORT_VERSION}",
                    "--prefix", prefix], check=True, env=env)


class Ort:
    """One node process holding one ORT session at `threads`."""

    def __init__(self, prefix, onnx_path, threads):
        self.process = subprocess.Popen(
            ["node", os.path.join(ROOT, "scripts", "bench_ort.js"), prefix, onnx_path,
             str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, ids, dump=None):
        self.process.stdin.write(json.dumps({"ids": ids, "dump": dump}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            sys.exit("bench_ort: the ORT process ended (see its stderr above)")
        return json.loads(line)

    def close(self):
        self.process.stdin.close()
        self.process.wait()


STATS = re.compile(r"load ([0-9.]+) ms, forward ([0-9.]+) ms, write ([0-9.]+) ms")


def attnlab_run(binary, model_dir, ids, threads, out):
    command = [binary, "model", "--model", model_dir, "--ids", ",".join(map(str, ids)),
               "--out", out, "--logits", "--stats", "--threads", str(threads)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_ort: attnlab failed ({done.returncode}):\n{done.stderr}")
    found = STATS.search(done.stderr)
    if not found:
        sys.exit(f"bench_ort: no load/forward/write times in attnlab's stderr:\n{done.stderr}")
    return {"load": float(found.group(1)), "forward": float(found.group(2)),
            "write": float(found.group(3))}


PEAK = re.compile(r"FMA peak loop \(\d+ threads?\):\s+\S+ ([0-9.]+) GFLOP/s")
WORK = re.compile(r"every position's logits\s+([0-9.]+) ms\s+([0-9.]+) GFLOP/s")


def work_and_peak(binary, model_dir, tokens, threads):
    """The forward's GFLOP with every position's logits, and the FMA loop's GFLOP/s at this
    thread count, from one `attnlab bench --model --logits` (so that ORT's time reads as a
    share of the same peak)."""
    command = [binary, "bench", "--model", model_dir, "--tokens", str(tokens), "--threads",
               str(threads), "--logits", "--repeats", "1"]
    done = subprocess.run(command, capture_output=True, text=True)
    peak, work = PEAK.search(done.stdout), WORK.search(done.stdout)
    if done.returncode != 0 or not peak or not work:
        sys.exit(f"bench_ort: {' '.join(command)} gave no peak or work:\n{done.stdout}"
                 f"{done.stderr}")
    return float(work.group(1)) * float(work.group(2)) / 1e3, float(peak.group(1))


def check_agreement(ort, binary, model_dir, ids, threads, work):
    dump = os.path.join(work, f"ort-{len(ids)}")
    answer = ort.run(ids, dump)
    ort_maps = np.fromfile(dump + ".attentions.f32", dtype="<f4").reshape(answer["attentions"])
    ort_logits = np.fromfile(dump + ".logits.f32", dtype="<f4").reshape(answer["logits"])
    npz = os.path.join(work, f"attnlab-{len(ids)}.npz")
    attnlab_run(binary, model_dir, ids, threads, npz)
    with np.load(npz) as record:
        maps, logits = record["attentions"], record["logits"]
    if maps.shape != ort_maps.shape or logits.shape != ort_logits.shape:
        sys.exit(f"bench_ort: shapes differ: attnlab {maps.shape} {logits.shape}, "
                 f"ORT {ort_maps.shape} {ort_logits.shape}")
    map_diff = float(np.abs(maps - ort_maps).max())
    logit_diff = float(np.abs(logits - ort_logits).max())
    logit_scale = float(np.abs(ort_logits).max())
    print(f"agreement, {len(ids)} tokens, {threads} thread(s): attentions max |diff| "
          f"{map_diff:.2e}; logits max |diff| {logit_diff:.2e} (largest |logit| "
          f"{logit_scale:.1f})", flush=True)
    for path in (dump + ".attentions.f32", dump + ".logits.f32", npz):
        os.remove(path)
    if not map_diff <= TOLERANCE:
        sys.exit(f"bench_ort: FAIL: attentions differ by {map_diff:.3e} > {TOLERANCE}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="GPT-2 checkpoint folder (F32)")
    parser.add_argument("--attnlab", default=os.path.join(ROOT, "build/release/app/attnlab"))
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build folder; ORT goes into BUILD/ort, the ONNX file and "
                             "the run's files into BUILD/ort/work")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--tokens", default="128,512")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    prefix = os.path.abspath(os.path.join(args.build, "ort"))
    work = os.path.join(prefix, "work")
    os.makedirs(work, exist_ok=True)
    binary = os.path.abspath(args.attnlab)
    model_dir = os.path.abspath(args.model)
    if not os.access(binary, os.X_OK):
        sys.exit(f"bench_ort: no attnlab at {binary} (--attnlab)")
    if shutil.which("node") is None or shutil.which("npm") is None:
        sys.exit("bench_ort: node and npm are needed")

    onnx_path = os.path.join(work, "model.onnx")
    print(f"exporting {model_dir} to {onnx_path} (torch {torch.__version__}, opset 17)",
          flush=True)
    config = export(model_dir, onnx_path)
    ensure_ort(prefix)

    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    print(f"attnlab: {binary}: {version.strip().splitlines()[0] if version.strip() else '?'}")
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"onnxruntime-node {ORT_VERSION}; node {node}")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), "?")
    print(f"cpu: {cpu} x {os.cpu_count()}; load average before: {os.getloadavg()}", flush=True)

    rng = np.random.default_rng(args.seed)
    threads_list = [int(t) for t in args.threads.split(",")]
    tokens_list = [int(s) for s in args.tokens.split(",")]
    rows = []
    for threads in threads_list:
        ort = Ort(prefix, onnx_path, threads)
        for tokens in tokens_list:
            ids = [int(i) for i in rng.integers(0, config["vocab_size"], tokens)]
            check_agreement(ort, binary, model_dir, ids, threads, work)
            npz = os.path.join(work, "timed.npz")
            ort_ms, attnlab_ms, writes, loads = [], [], [], []
            for _ in range(args.repeats):
                ort_ms.append(ort.run(ids)["ms"])
                stats = attnlab_run(binary, model_dir, ids, threads, npz)
                attnlab_ms.append(stats["forward"])
                writes.append(stats["write"])
                loads.append(os.getloadavg()[0])
            os.remove(npz)
            gflop, peak = work_and_peak(binary, model_dir, tokens, threads)
            row = (tokens, threads, statistics.median(ort_ms), statistics.median(attnlab_ms),
                   statistics.median(writes), min(ort_ms), max(ort_ms), min(attnlab_ms),
                   max(attnlab_ms), gflop, peak)
            rows.append(row)
            print(f"{tokens} tokens, {threads} thread(s): ORT "
                  f"{' '.join(f'{t:.0f}' for t in ort_ms)} ms; attnlab forward "
                  f"{' '.join(f'{t:.0f}' for t in attnlab_ms)} ms; 1-minute load average "
                  f"{min(loads):.1f}–{max(loads):.1f}", flush=True)
        ort.close()

    print(f"\nload average after: {os.getloadavg()}")
    print(f"medians of {args.repeats} alternating runs each (ms); ratio = ORT / attnlab, "
          "below 1: ORT is faster")
    print("rate: the forward's GFLOP with every position's logits (from `attnlab bench --model "
          "--logits`) over the median time, as a share of the FMA loop's GFLOP/s at that "
          "thread count (measured once per setting, after the runs)")
    print("| tokens | threads | ORT session.run | attnlab forward | ratio | ORT rate | "
          "attnlab rate | attnlab write |")
    print("|---|---|---|---|---|---|---|---|")
    for tokens, threads, o, a, w, omin, omax, amin, amax, gflop, peak in rows:
        print(f"| {tokens} | {threads} | {o:.0f} ({omin:.0f}–{omax:.0f}) | {a:.0f} "
              f"({amin:.0f}–{amax:.0f}) | {o / a:.2f}× | {gflop / o * 1e5 / peak:.0f} % | "
              f"{gflop / a * 1e5 / peak:.0f} % | {w:.0f} |")


if __name__ == "__main__":
    main()
