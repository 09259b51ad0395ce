#!/usr/bin/python3
"""Whole-process `attnlab compute` against PyTorch running seed 000's SDPA in process.

Issue 14 item 3. In one run, on the same .npy inputs, alternately: PyTorch's
`softmax(Q K^T / sqrt(d) [masked_fill(mask == 0, -1e9)]) V` timed in process with
torch.set_num_threads(T), and `attnlab compute ... --threads T` timed as a whole process
(start, read the .npy files, compute, write the output). Prints the medians and the ratios
torch / attnlab (above 1: attnlab is faster). Also checks once that attnlab's output matches
torch's. Speed is reported, never asserted.

Needs Debian's python3-torch and an OpenBLAS with threads (libopenblas0-pthread); run it with
/usr/bin/python3 (a pyenv python on PATH has no torch):

    /usr/bin/python3 scripts/bench_torch.py --attnlab build/release/app/attnlab
"""

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch


def sdpa(q, k, v, mask=None):
    """Seed 000's scaled dot-product attention."""
    d = q.size(-1)
    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
    if mask is not None:
        s = s.masked_fill(mask == 0, -1e9)
    w = torch.nn.functional.softmax(s, dim=-1)
    return torch.matmul(w, v)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attnlab", default="build/release/app/attnlab",
                        help="the attnlab binary (default: %(default)s)")
    parser.add_argument("--size", type=int, default=4096, help="S (default: %(default)s)")
    parser.add_argument("--heads", type=int, default=8, help="H (default: %(default)s)")
    parser.add_argument("--dim", type=int, default=64, help="d (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2, help="both sides (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5, help="(default: %(default)s)")
    parser.add_argument("--dir", help="where q/k/v.npy go (default: a temporary directory)")
    args = parser.parse_args()
    if not os.access(args.attnlab, os.X_OK):
        sys.exit(f"bench_torch.py: {args.attnlab} is not an executable (use --attnlab)")

    torch.set_num_threads(args.threads)
    S, H, D = args.size, args.heads, args.dim
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, H, S, D, generator=g)
    k = torch.randn(1, H, S, D, generator=g)
    v = torch.randn(1, H, S, D, generator=g)
    causal = torch.tril(torch.ones(S, S))

    with tempfile.TemporaryDirectory() as temp:
        where = args.dir or temp
        paths = {name: os.path.join(where, name + ".npy") for name in ("q", "k", "v", "o")}
        for name, t in (("q", q), ("k", k), ("v", v)):
            np.save(paths[name], t.numpy())

        def attnlab(variant, mask):
            command = [args.attnlab, "compute", "--q", paths["q"], "--k", paths["k"],
                       "--v", paths["v"], "--out", paths["o"], "--variant", variant,
                       "--threads", str(args.threads)]
            if mask:
                command += ["--mask", "causal"]
            start = time.perf_counter()
            subprocess.run(command, check=True)
            return time.perf_counter() - start

        def torch_run(mask):
            with torch.no_grad():
                start = time.perf_counter()
                out = sdpa(q, k, v, mask)
                return time.perf_counter() - start, out

        cases = [  # (label, torch mask, attnlab variant, attnlab mask)
            ("dense", None, "softmax", False),
            ("dense", None, "flash", False),
            ("causal", causal, "softmax", True),
            ("causal", causal, "flash", True),
        ]
        # Warm-up, and the check that both compute the same thing.
        for label, mask, variant, masked in cases:
            _, expected = torch_run(mask)
            attnlab(variant, masked)
            got = np.load(paths["o"])
            error = float(np.max(np.abs(got - expected.numpy())))
            if not error < 1e-4:
                sys.exit(f"bench_torch.py: attnlab {variant} {label} differs from torch by {error}")

        torch_times = {"dense": [], "causal": []}
        attnlab_times = {(variant, masked): [] for _, _, variant, masked in cases}
        for _ in range(args.repeats):
            for label, mask, variant, masked in cases:
                if variant == "softmax":  # one torch run per mask per round, alternating
                    torch_times[label].append(torch_run(mask)[0])
                attnlab_times[(variant, masked)].append(attnlab(variant, masked))

    load = os.getloadavg()
    print(f"S = {S}, H = {H}, d = {D}, batch 1, {args.threads} threads, median of "
          f"{args.repeats}; torch {torch.__version__} in process, attnlab whole process; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for label in ("dense", "causal"):
        print(f"torch sdpa {label:<7} {1e3 * statistics.median(torch_times[label]):9.1f} ms")
    for label, _, variant, masked in cases:
        mine = statistics.median(attnlab_times[(variant, masked)])
        theirs = statistics.median(torch_times[label])
        name = f"attnlab {variant}" + (" causal" if masked else "")
        print(f"{name:<25} {1e3 * mine:9.1f} ms   {theirs / mine:5.2f}x torch {label}")


if __name__ == "__main__":
    main()
